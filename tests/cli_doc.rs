//! `docs/cli.md` is the command line as clap declares it: this test renders
//! the reference (each command, and each command of a command of commands) from `wavepath::cli::Cli` and fails where the committed
//! page differs, so the page cannot go stale. After changing a flag or its
//! help, `WAVEPATH_BLESS=1 cargo test --test cli_doc` rewrites the page.

use clap::CommandFactory;
use std::path::Path;

/// The page: every command's long help, as `wavepath COMMAND --help`
/// prints it.
fn render() -> String {
    let mut cli = wavepath::cli::Cli::command().term_width(100);
    cli.build();
    let mut page = String::from(
        "# The command line\n\n\
         Every command's `--help`, generated from the program's own definitions\n\
         (`tests/cli_doc.rs` fails where this page differs from them).\n\n",
    );
    page += &format!("## wavepath\n\n```text\n{}```\n", cli.render_long_help());
    let names: Vec<String> = cli.get_subcommands().map(|c| c.get_name().to_string()).collect();
    for name in names {
        if name == "help" {
            continue;
        }
        let sub = cli.find_subcommand_mut(&name).unwrap();
        page += &format!("\n## wavepath {name}\n\n```text\n{}```\n", sub.render_long_help());
        // A command of commands (`study run`, `study install`): each of its own.
        let inner: Vec<String> = sub.get_subcommands().map(|c| c.get_name().to_string()).collect();
        for inner in inner.iter().filter(|n| *n != "help") {
            let sub = sub.find_subcommand_mut(inner).unwrap();
            page += &format!(
                "\n## wavepath {name} {inner}\n\n```text\n{}```\n",
                sub.render_long_help()
            );
        }
    }
    page
}

#[test]
fn the_command_line_reference_is_the_programs_own() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/cli.md");
    let page = render();
    if std::env::var_os("WAVEPATH_BLESS").is_some() {
        std::fs::write(&path, &page).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == page,
        "docs/cli.md differs from the command line's definitions; \
         rerun with WAVEPATH_BLESS=1 to rewrite it"
    );
}
