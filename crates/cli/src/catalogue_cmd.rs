//! `reanimator catalogue`: prints the syscall table, the one source of
//! truth for capture, decoding and replay.

use std::process::ExitCode;

use anyhow::{bail, Result};
use reanimator_catalogue::{self as catalogue, Group};

/// Arguments of `reanimator catalogue`.
#[derive(clap::Args, Debug)]
pub struct CatalogueArgs {
    /// Show only these calls: names, numbers, or groups like `%file`
    /// (file, desc, process, network, memory, signal, ipc, creds, clock,
    /// stat; and those that set how replay treats a call: nofollow, aio,
    /// query, reread, cursor, see docs/REPLAY.md). The same names work in
    /// every command's `--call`.
    pub filter: Vec<String>,
    /// Show only calls whose arguments are decoded.
    #[arg(long)]
    pub decoded: bool,
}

/// Prints `nr  signature` for each matching call.
pub fn run(args: &CatalogueArgs) -> Result<ExitCode> {
    let mut groups = 0;
    let mut names = Vec::new();
    for f in &args.filter {
        if let Some(g) = f.strip_prefix('%') {
            match Group::NAMES.iter().find(|(n, _)| *n == g) {
                Some((_, bits)) => groups |= bits,
                None => bail!("unknown group %{g}; known: {}", group_list()),
            }
        } else if let Ok(nr) = f.parse::<u32>() {
            match catalogue::by_nr(nr) {
                Some(s) => names.push(s.name),
                None => bail!("no system call has number {nr} on x86_64"),
            }
        } else {
            match catalogue::by_name(f) {
                Some(s) => names.push(s.name),
                None => bail!("unknown system call {f:?}"),
            }
        }
    }
    let mut shown = 0;
    for s in catalogue::all().iter().chain(catalogue::pseudo_calls()) {
        let by_name = names.contains(&s.name);
        let by_group = groups != 0 && s.groups & groups != 0;
        let unfiltered = names.is_empty() && groups == 0;
        if (unfiltered || by_name || by_group) && (!args.decoded || s.is_decoded()) {
            outln!("{:>3}  {s}", s.nr);
            shown += 1;
        }
    }
    if shown == 0 {
        bail!("no system call matches");
    }
    Ok(ExitCode::SUCCESS)
}

fn group_list() -> String {
    Group::NAMES
        .iter()
        .map(|(n, _)| format!("%{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[derive(clap::Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: CatalogueArgs,
    }

    /// Every group `--call` and `catalogue` accept is named in the help.
    #[test]
    fn the_help_names_every_group() {
        let help = Wrapper::command().render_long_help().to_string();
        for (name, _) in Group::NAMES {
            assert!(help.contains(name), "{name} missing from:\n{help}");
        }
    }
}
