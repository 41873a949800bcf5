//! The constant tables behind [`FlagSet`](super::FlagSet).

use super::{FlagSet, FlagTable};

/// The table for `set`.
pub(super) fn table(set: FlagSet) -> &'static FlagTable {
    match set {
        FlagSet::Open => &OPEN,
        _ => &OPEN, // placeholder while the tables are written
    }
}

static OPEN: FlagTable = FlagTable {
    name: "open",
    enumerated: false,
    low: Some((0o3, &[(0, "O_RDONLY"), (1, "O_WRONLY"), (2, "O_RDWR")])),
    entries: &[(0o100, "O_CREAT"), (0o200, "O_EXCL"), (0o1000, "O_TRUNC"), (0o2000, "O_APPEND")],
};
