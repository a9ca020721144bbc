// The migrations are embedded by `sqlx::migrate!` (src/ledger/): a migration added or
// changed must rebuild the crate, which cargo does not know by itself.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
