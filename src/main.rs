use clap::Parser;
use clearledger::cli::{self, Cli, Command, LogFormat};
use std::process::ExitCode;

/// mimalloc instead of glibc's allocator: an ISO 20022 walk makes and frees a few small
/// strings per element, and glibc's `free`/`malloc_consolidate` were a fifth of `check`'s
/// CPU on pacs.008. The benches and examples declare the same, to measure what ships.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // A refused command line under `--log-format json` is a JSON event too.
        Err(e) if e.use_stderr() && cli::events::json_requested(std::env::args_os()) => {
            cli::events::init(LogFormat::Json);
            let text = e.render().to_string();
            cli::out::err_line(tracing::Level::ERROR, format_args!("{}", text.trim_end()));
            return ExitCode::from(cli::exit::USAGE);
        }
        Err(e) => e.exit(),
    };
    cli::events::init(cli.global.log_format);
    cli::signals::install(cli.global.log_format == LogFormat::Json);
    // The server answers many requests at once: a runtime with a worker per core.
    let mut builder = match cli.command {
        Command::Serve(_) => tokio::runtime::Builder::new_multi_thread(),
        _ => tokio::runtime::Builder::new_current_thread(),
    };
    let rt = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            cli::out::err_line(
                tracing::Level::ERROR,
                format_args!("clearledger: cannot start the runtime: {e}"),
            );
            return ExitCode::from(cli::exit::INFRASTRUCTURE);
        }
    };
    let code = rt.block_on(async {
        match &cli.command {
            Command::Ingest(a) => cli::ingest::run(&cli.global, a).await,
            Command::Check(a) => cli::check::run(&cli.global, a),
            Command::Report(a) => cli::report::run(&cli.global, a).await,
            Command::Runs(a) => cli::runs::run(&cli.global, a).await,
            Command::Lookup(a) => cli::lookup::run(&cli.global, a).await,
            Command::Held(a) => cli::actions::held(&cli.global, a).await,
            Command::Resolve(a) => cli::actions::resolve(&cli.global, a).await,
            Command::Reverse(a) => cli::actions::reverse(&cli.global, a).await,
            Command::Tenant(a) => cli::tenant::run(&cli.global, a).await,
            Command::Statements(a) => cli::statements::run(&cli.global, a).await,
            Command::Account(a) => cli::account::run(&cli.global, a).await,
            Command::Reconcile(a) => cli::reconcile::run(&cli.global, a).await,
            Command::Serve(a) => cli::serve::run(&cli.global, a).await,
            Command::Apikey(a) => cli::apikey::run(&cli.global, a).await,
            Command::Webhook(a) => cli::webhook::run(&cli.global, a).await,
            Command::Db(a) => cli::db::run(&cli.global, a).await,
            Command::Generate(a) => cli::generate::run(a),
        }
    });
    ExitCode::from(code)
}
