//! Which GPUs a command renders on: `--devices all` or a list of ordinals
//! (`--devices 0,2`), as the CUDA driver numbers them.
//!
//! The text is checked when it is parsed (a list that is empty, names a
//! device twice or holds something other than an ordinal); whether each
//! ordinal exists is checked against the GPUs present when they are opened
//! ([`Devices::ordinals`]).

use crate::settings::echo::shorten_for_error;

/// The GPUs a command asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Devices {
    /// Every GPU the driver sees.
    All,
    /// These ordinals, distinct, in the order given.
    List(Vec<usize>),
}

/// Which devices of a split render take part (`--split-all`, an
/// experiment's `split_all`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SplitRule {
    /// The first device ready renders; each later one joins only when that
    /// saves more time than its film costs to read back and merge.
    #[default]
    Paying,
    /// Every device renders a share, whatever it saves: the split itself,
    /// measured or checked.
    Every,
}

/// The most GPUs one image may be split over (an experiment's `gpus`):
/// more than any one host holds.
pub const MAX_GPUS: u32 = 64;

/// What `--devices` takes, for its error messages.
const EXPECTED: &str = "expected `all` or a comma-separated list of GPU ordinals such as 0,1";

/// Parses `all` or a comma-separated list of distinct GPU ordinals.
pub fn parse_devices(text: &str) -> Result<Devices, String> {
    let text = text.trim();
    if text == "all" {
        return Ok(Devices::All);
    }
    if text.is_empty() {
        return Err(format!("{EXPECTED}; got nothing"));
    }
    let mut list = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(format!("{EXPECTED}; `{}` has an empty entry", shorten_for_error(text)));
        }
        let ordinal = item.parse::<usize>().map_err(|_| {
            format!(
                "{EXPECTED}; `{}` is not a GPU ordinal (0, 1, ...)",
                shorten_for_error(item)
            )
        })?;
        if list.contains(&ordinal) {
            return Err(format!("{EXPECTED}; device {ordinal} is listed twice"));
        }
        list.push(ordinal);
    }
    Ok(Devices::List(list))
}

impl Devices {
    /// The ordinals to open among `present` GPUs: an error names
    /// `--devices`, the ordinal that is not there and how many are.
    pub fn ordinals(&self, present: usize) -> Result<Vec<usize>, String> {
        match self {
            Devices::All if present == 0 => Err("--devices all: the driver sees no GPU".into()),
            Devices::All => Ok((0..present).collect()),
            Devices::List(list) if list.is_empty() => Err(format!("--devices: {EXPECTED}; got nothing")),
            Devices::List(list) => match list.iter().find(|&&d| d >= present) {
                Some(d) => Err(format!(
                    "--devices: there is no device {d}; {present} GPU{} present (ordinals 0 to {})",
                    if present == 1 { " is" } else { "s are" },
                    present.saturating_sub(1)
                )),
                None => Ok(list.clone()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_and_lists_parse() {
        assert_eq!(parse_devices("all"), Ok(Devices::All));
        assert_eq!(parse_devices("0"), Ok(Devices::List(vec![0])));
        assert_eq!(parse_devices("2, 0,1"), Ok(Devices::List(vec![2, 0, 1])));
    }

    #[test]
    fn bad_lists_say_what_was_expected() {
        for (text, reason) in [
            ("", "got nothing"),
            ("0,,1", "empty entry"),
            ("0,1,", "empty entry"),
            ("0,x", "`x` is not a GPU ordinal"),
            ("-1", "`-1` is not a GPU ordinal"),
            ("1,0,1", "device 1 is listed twice"),
        ] {
            let e = parse_devices(text).unwrap_err();
            assert!(e.contains(EXPECTED) && e.contains(reason), "{text}: {e}");
        }
    }

    #[test]
    fn ordinals_are_checked_against_the_gpus_present() {
        assert_eq!(Devices::All.ordinals(3), Ok(vec![0, 1, 2]));
        assert!(Devices::All.ordinals(0).unwrap_err().contains("no GPU"));
        assert!(
            Devices::List(Vec::new())
                .ordinals(2)
                .unwrap_err()
                .contains("got nothing")
        );
        assert_eq!(Devices::List(vec![1, 0]).ordinals(2), Ok(vec![1, 0]));
        let e = Devices::List(vec![0, 2]).ordinals(2).unwrap_err();
        assert!(
            e.contains("--devices") && e.contains("no device 2") && e.contains("0 to 1"),
            "{e}"
        );
        let e = Devices::List(vec![1]).ordinals(1).unwrap_err();
        assert!(e.contains("1 GPU is present"), "{e}");
    }
}
