//! errno and signal names (x86_64 Linux), for text output.

/// The symbolic name of errno `n` (`ENOENT`), including the kernel's
/// restart codes that tracers see when a call is interrupted.
pub fn errno_name(n: u32) -> Option<&'static str> {
    const NAMES: [&str; 134] = [
        "",
        "EPERM",
        "ENOENT",
        "ESRCH",
        "EINTR",
        "EIO",
        "ENXIO",
        "E2BIG",
        "ENOEXEC",
        "EBADF",
        "ECHILD",
        "EAGAIN",
        "ENOMEM",
        "EACCES",
        "EFAULT",
        "ENOTBLK",
        "EBUSY",
        "EEXIST",
        "EXDEV",
        "ENODEV",
        "ENOTDIR",
        "EISDIR",
        "EINVAL",
        "ENFILE",
        "EMFILE",
        "ENOTTY",
        "ETXTBSY",
        "EFBIG",
        "ENOSPC",
        "ESPIPE",
        "EROFS",
        "EMLINK",
        "EPIPE",
        "EDOM",
        "ERANGE",
        "EDEADLK",
        "ENAMETOOLONG",
        "ENOLCK",
        "ENOSYS",
        "ENOTEMPTY",
        "ELOOP",
        "",
        "ENOMSG",
        "EIDRM",
        "ECHRNG",
        "EL2NSYNC",
        "EL3HLT",
        "EL3RST",
        "ELNRNG",
        "EUNATCH",
        "ENOCSI",
        "EL2HLT",
        "EBADE",
        "EBADR",
        "EXFULL",
        "ENOANO",
        "EBADRQC",
        "EBADSLT",
        "",
        "EBFONT",
        "ENOSTR",
        "ENODATA",
        "ETIME",
        "ENOSR",
        "ENONET",
        "ENOPKG",
        "EREMOTE",
        "ENOLINK",
        "EADV",
        "ESRMNT",
        "ECOMM",
        "EPROTO",
        "EMULTIHOP",
        "EDOTDOT",
        "EBADMSG",
        "EOVERFLOW",
        "ENOTUNIQ",
        "EBADFD",
        "EREMCHG",
        "ELIBACC",
        "ELIBBAD",
        "ELIBSCN",
        "ELIBMAX",
        "ELIBEXEC",
        "EILSEQ",
        "ERESTART",
        "ESTRPIPE",
        "EUSERS",
        "ENOTSOCK",
        "EDESTADDRREQ",
        "EMSGSIZE",
        "EPROTOTYPE",
        "ENOPROTOOPT",
        "EPROTONOSUPPORT",
        "ESOCKTNOSUPPORT",
        "EOPNOTSUPP",
        "EPFNOSUPPORT",
        "EAFNOSUPPORT",
        "EADDRINUSE",
        "EADDRNOTAVAIL",
        "ENETDOWN",
        "ENETUNREACH",
        "ENETRESET",
        "ECONNABORTED",
        "ECONNRESET",
        "ENOBUFS",
        "EISCONN",
        "ENOTCONN",
        "ESHUTDOWN",
        "ETOOMANYREFS",
        "ETIMEDOUT",
        "ECONNREFUSED",
        "EHOSTDOWN",
        "EHOSTUNREACH",
        "EALREADY",
        "EINPROGRESS",
        "ESTALE",
        "EUCLEAN",
        "ENOTNAM",
        "ENAVAIL",
        "EISNAM",
        "EREMOTEIO",
        "EDQUOT",
        "ENOMEDIUM",
        "EMEDIUMTYPE",
        "ECANCELED",
        "ENOKEY",
        "EKEYEXPIRED",
        "EKEYREVOKED",
        "EKEYREJECTED",
        "EOWNERDEAD",
        "ENOTRECOVERABLE",
        "ERFKILL",
        "EHWPOISON",
    ];
    match n {
        512 => Some("ERESTARTSYS"),
        513 => Some("ERESTARTNOINTR"),
        514 => Some("ERESTARTNOHAND"),
        515 => Some("ENOIOCTLCMD"),
        516 => Some("ERESTART_RESTARTBLOCK"),
        _ => NAMES.get(n as usize).copied().filter(|s| !s.is_empty()),
    }
}

/// True for the kernel-internal codes meaning "interrupted, will be
/// restarted"; strace prints these as `= ?`.
pub fn is_restart(errno: u32) -> bool {
    (512..=516).contains(&errno) && errno != 515
}

/// The name of signal `n` (`SIGCHLD`).
pub fn signal_name(n: i64) -> Option<&'static str> {
    const NAMES: [&str; 32] = [
        "",
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    usize::try_from(n)
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
        .filter(|s| !s.is_empty())
}

/// The `DT_*` name of a directory entry's type (`DT_REG`).
pub(crate) fn dirent_type_name(t: u8) -> Option<&'static str> {
    Some(match t {
        0 => "DT_UNKNOWN",
        1 => "DT_FIFO",
        2 => "DT_CHR",
        4 => "DT_DIR",
        6 => "DT_BLK",
        8 => "DT_REG",
        10 => "DT_LNK",
        12 => "DT_SOCK",
        14 => "DT_WHT",
        _ => return None,
    })
}

/// The `PTRACE_EVENT_*` name of the event a tracer's wait status carries
/// in its bits 16 and up.
pub(crate) fn ptrace_event_name(event: u32) -> Option<&'static str> {
    Some(match event {
        1 => "PTRACE_EVENT_FORK",
        2 => "PTRACE_EVENT_VFORK",
        3 => "PTRACE_EVENT_CLONE",
        4 => "PTRACE_EVENT_EXEC",
        5 => "PTRACE_EVENT_VFORK_DONE",
        6 => "PTRACE_EVENT_EXIT",
        7 => "PTRACE_EVENT_SECCOMP",
        128 => "PTRACE_EVENT_STOP",
        _ => return None,
    })
}

/// The `CLD_*` name of a `SIGCHLD` `si_code` (`CLD_EXITED`).
pub(crate) fn sigchld_code_name(code: i32) -> Option<&'static str> {
    Some(match code {
        1 => "CLD_EXITED",
        2 => "CLD_KILLED",
        3 => "CLD_DUMPED",
        4 => "CLD_TRAPPED",
        5 => "CLD_STOPPED",
        6 => "CLD_CONTINUED",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(errno_name(2), Some("ENOENT"));
        assert_eq!(errno_name(133), Some("EHWPOISON"));
        assert_eq!(errno_name(41), None);
        assert_eq!(errno_name(512), Some("ERESTARTSYS"));
        assert_eq!(errno_name(9999), None);
        assert_eq!(signal_name(17), Some("SIGCHLD"));
        assert_eq!(signal_name(-1), None);
        assert!(is_restart(512) && !is_restart(515) && !is_restart(4));
    }
}
