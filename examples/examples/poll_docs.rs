//! Prints the reference tables of the downstream kind `acme.poll`, generated like the core kinds'.
//!
//! Run: `cargo run -p agh-examples --example poll_docs`

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let schemas =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/agh-network-v0");
    print!("{}", agh_examples::poll::reference_docs(&schemas)?);
    Ok(())
}
