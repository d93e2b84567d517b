//! The `wavepath` binary: parse the command line, run, print the error chain.

use renderer::settings::echo::shorten_long_words;
use std::process::ExitCode;
use wavepath::cli::Cli;

fn main() -> ExitCode {
    if let Some(missing) = missing_cpu_features() {
        eprintln!(
            "wavepath: error: this build targets x86-64-v3 (.cargo/config.toml) and this CPU lacks {missing}; \
             rebuild with RUSTFLAGS=\"-C target-cpu=x86-64\" (the same images, slower)"
        );
        return ExitCode::FAILURE;
    }
    match wavepath::commands::run(Cli::parse_args()) {
        Ok(code) => code,
        // A reader that stops early (`| head`) is not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("wavepath: error: {}", shorten_long_words(&format!("{e:#}")));
            ExitCode::FAILURE
        }
    }
}

/// The x86-64-v3 features the build was compiled for that this CPU lacks,
/// checked before anything else runs (an instruction it lacks would end
/// the process with SIGILL, saying nothing).
fn missing_cpu_features() -> Option<&'static str> {
    #[cfg(all(target_arch = "x86_64", target_feature = "fma"))]
    if !(std::arch::is_x86_feature_detected!("fma") && std::arch::is_x86_feature_detected!("avx2")) {
        return Some("FMA or AVX2");
    }
    None
}
