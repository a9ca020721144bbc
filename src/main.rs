use clap::Parser;
use clearledger::cli::{self, Cli, Command, LogFormat};
use std::process::ExitCode;
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = Cli::parse();
    cli::signals::install();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // A log line that cannot be written (standard error closed or full) is dropped:
        // reporting it would be `eprintln!`, which panics on the same standard error.
        .log_internal_errors(false);
    match cli.global.log_format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "clearledger: cannot start the runtime: {e}"
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
            Command::Db(a) => cli::db::run(&cli.global, a).await,
            Command::Generate(a) => cli::generate::run(a),
        }
    });
    ExitCode::from(code)
}
