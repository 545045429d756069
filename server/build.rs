// `sqlx::migrate!` embeds the migrations at compile time; without this, a migration added
// to an already-built tree would not be in the next build (cargo only watches Rust
// sources).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
