use agh_protocol::Body;

#[derive(Body)]
#[agh(kind = "acme.raw")]
union Raw {
    a: u32,
    b: f32,
}

fn main() {}
