//! The reconciliation engine alone on synthetic inputs, with its phase timings:
//! `RUST_LOG=clearledger=debug cargo run --release --example reconcile_engine -- 1000000`.

/// The binary's allocator (src/main.rs), so this measures what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let inp = clearledger::reconcile::synthetic(n);
    let t = std::time::Instant::now();
    let items =
        clearledger::reconcile::reconcile(&inp, &clearledger::reconcile::rules::Rules::default());
    eprintln!(
        "{} items in {:.3} s",
        items.len(),
        t.elapsed().as_secs_f64()
    );
}
