use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.wrapped")]
struct Wrapped<T> {
    inner: T,
}

fn kind_of<B: Body>() -> &'static str {
    B::RULES.kind
}

fn main() {
    assert_eq!(kind_of::<Wrapped<u32>>(), "acme.wrapped");
}
