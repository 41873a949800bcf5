//! Tests of the table itself: numbers, names, size rules, replay classes
//! and flag decoding.

use reanimator_catalogue::{
    all, by_call, by_name, by_nr, command_rows, Dir, Effect, FlagSet, Group, Ids, Kind, Len,
    Replay, Ret, StructType, Which, FICLONE, TIOCGPTPEER,
};

/// Every syscall libc knows on x86_64, with its number.
fn libc_syscalls() -> Vec<(libc::c_long, &'static str)> {
    vec![
        (libc::SYS_read, "read"),
        (libc::SYS_write, "write"),
        (libc::SYS_open, "open"),
        (libc::SYS_close, "close"),
        (libc::SYS_stat, "stat"),
        (libc::SYS_fstat, "fstat"),
        (libc::SYS_lstat, "lstat"),
        (libc::SYS_poll, "poll"),
        (libc::SYS_lseek, "lseek"),
        (libc::SYS_mmap, "mmap"),
        (libc::SYS_mprotect, "mprotect"),
        (libc::SYS_munmap, "munmap"),
        (libc::SYS_brk, "brk"),
        (libc::SYS_rt_sigaction, "rt_sigaction"),
        (libc::SYS_rt_sigprocmask, "rt_sigprocmask"),
        (libc::SYS_rt_sigreturn, "rt_sigreturn"),
        (libc::SYS_ioctl, "ioctl"),
        (libc::SYS_pread64, "pread64"),
        (libc::SYS_pwrite64, "pwrite64"),
        (libc::SYS_readv, "readv"),
        (libc::SYS_writev, "writev"),
        (libc::SYS_access, "access"),
        (libc::SYS_pipe, "pipe"),
        (libc::SYS_select, "select"),
        (libc::SYS_sched_yield, "sched_yield"),
        (libc::SYS_mremap, "mremap"),
        (libc::SYS_msync, "msync"),
        (libc::SYS_mincore, "mincore"),
        (libc::SYS_madvise, "madvise"),
        (libc::SYS_shmget, "shmget"),
        (libc::SYS_shmat, "shmat"),
        (libc::SYS_shmctl, "shmctl"),
        (libc::SYS_dup, "dup"),
        (libc::SYS_dup2, "dup2"),
        (libc::SYS_pause, "pause"),
        (libc::SYS_nanosleep, "nanosleep"),
        (libc::SYS_getitimer, "getitimer"),
        (libc::SYS_alarm, "alarm"),
        (libc::SYS_setitimer, "setitimer"),
        (libc::SYS_getpid, "getpid"),
        (libc::SYS_sendfile, "sendfile"),
        (libc::SYS_socket, "socket"),
        (libc::SYS_connect, "connect"),
        (libc::SYS_accept, "accept"),
        (libc::SYS_sendto, "sendto"),
        (libc::SYS_recvfrom, "recvfrom"),
        (libc::SYS_sendmsg, "sendmsg"),
        (libc::SYS_recvmsg, "recvmsg"),
        (libc::SYS_shutdown, "shutdown"),
        (libc::SYS_bind, "bind"),
        (libc::SYS_listen, "listen"),
        (libc::SYS_getsockname, "getsockname"),
        (libc::SYS_getpeername, "getpeername"),
        (libc::SYS_socketpair, "socketpair"),
        (libc::SYS_setsockopt, "setsockopt"),
        (libc::SYS_getsockopt, "getsockopt"),
        (libc::SYS_clone, "clone"),
        (libc::SYS_fork, "fork"),
        (libc::SYS_vfork, "vfork"),
        (libc::SYS_execve, "execve"),
        (libc::SYS_exit, "exit"),
        (libc::SYS_wait4, "wait4"),
        (libc::SYS_kill, "kill"),
        (libc::SYS_uname, "uname"),
        (libc::SYS_semget, "semget"),
        (libc::SYS_semop, "semop"),
        (libc::SYS_semctl, "semctl"),
        (libc::SYS_shmdt, "shmdt"),
        (libc::SYS_msgget, "msgget"),
        (libc::SYS_msgsnd, "msgsnd"),
        (libc::SYS_msgrcv, "msgrcv"),
        (libc::SYS_msgctl, "msgctl"),
        (libc::SYS_fcntl, "fcntl"),
        (libc::SYS_flock, "flock"),
        (libc::SYS_fsync, "fsync"),
        (libc::SYS_fdatasync, "fdatasync"),
        (libc::SYS_truncate, "truncate"),
        (libc::SYS_ftruncate, "ftruncate"),
        (libc::SYS_getdents, "getdents"),
        (libc::SYS_getcwd, "getcwd"),
        (libc::SYS_chdir, "chdir"),
        (libc::SYS_fchdir, "fchdir"),
        (libc::SYS_rename, "rename"),
        (libc::SYS_mkdir, "mkdir"),
        (libc::SYS_rmdir, "rmdir"),
        (libc::SYS_creat, "creat"),
        (libc::SYS_link, "link"),
        (libc::SYS_unlink, "unlink"),
        (libc::SYS_symlink, "symlink"),
        (libc::SYS_readlink, "readlink"),
        (libc::SYS_chmod, "chmod"),
        (libc::SYS_fchmod, "fchmod"),
        (libc::SYS_chown, "chown"),
        (libc::SYS_fchown, "fchown"),
        (libc::SYS_lchown, "lchown"),
        (libc::SYS_umask, "umask"),
        (libc::SYS_gettimeofday, "gettimeofday"),
        (libc::SYS_getrlimit, "getrlimit"),
        (libc::SYS_getrusage, "getrusage"),
        (libc::SYS_sysinfo, "sysinfo"),
        (libc::SYS_times, "times"),
        (libc::SYS_ptrace, "ptrace"),
        (libc::SYS_getuid, "getuid"),
        (libc::SYS_syslog, "syslog"),
        (libc::SYS_getgid, "getgid"),
        (libc::SYS_setuid, "setuid"),
        (libc::SYS_setgid, "setgid"),
        (libc::SYS_geteuid, "geteuid"),
        (libc::SYS_getegid, "getegid"),
        (libc::SYS_setpgid, "setpgid"),
        (libc::SYS_getppid, "getppid"),
        (libc::SYS_getpgrp, "getpgrp"),
        (libc::SYS_setsid, "setsid"),
        (libc::SYS_setreuid, "setreuid"),
        (libc::SYS_setregid, "setregid"),
        (libc::SYS_getgroups, "getgroups"),
        (libc::SYS_setgroups, "setgroups"),
        (libc::SYS_setresuid, "setresuid"),
        (libc::SYS_getresuid, "getresuid"),
        (libc::SYS_setresgid, "setresgid"),
        (libc::SYS_getresgid, "getresgid"),
        (libc::SYS_getpgid, "getpgid"),
        (libc::SYS_setfsuid, "setfsuid"),
        (libc::SYS_setfsgid, "setfsgid"),
        (libc::SYS_getsid, "getsid"),
        (libc::SYS_capget, "capget"),
        (libc::SYS_capset, "capset"),
        (libc::SYS_rt_sigpending, "rt_sigpending"),
        (libc::SYS_rt_sigtimedwait, "rt_sigtimedwait"),
        (libc::SYS_rt_sigqueueinfo, "rt_sigqueueinfo"),
        (libc::SYS_rt_sigsuspend, "rt_sigsuspend"),
        (libc::SYS_sigaltstack, "sigaltstack"),
        (libc::SYS_utime, "utime"),
        (libc::SYS_mknod, "mknod"),
        (libc::SYS_uselib, "uselib"),
        (libc::SYS_personality, "personality"),
        (libc::SYS_ustat, "ustat"),
        (libc::SYS_statfs, "statfs"),
        (libc::SYS_fstatfs, "fstatfs"),
        (libc::SYS_sysfs, "sysfs"),
        (libc::SYS_getpriority, "getpriority"),
        (libc::SYS_setpriority, "setpriority"),
        (libc::SYS_sched_setparam, "sched_setparam"),
        (libc::SYS_sched_getparam, "sched_getparam"),
        (libc::SYS_sched_setscheduler, "sched_setscheduler"),
        (libc::SYS_sched_getscheduler, "sched_getscheduler"),
        (libc::SYS_sched_get_priority_max, "sched_get_priority_max"),
        (libc::SYS_sched_get_priority_min, "sched_get_priority_min"),
        (libc::SYS_sched_rr_get_interval, "sched_rr_get_interval"),
        (libc::SYS_mlock, "mlock"),
        (libc::SYS_munlock, "munlock"),
        (libc::SYS_mlockall, "mlockall"),
        (libc::SYS_munlockall, "munlockall"),
        (libc::SYS_vhangup, "vhangup"),
        (libc::SYS_modify_ldt, "modify_ldt"),
        (libc::SYS_pivot_root, "pivot_root"),
        (libc::SYS__sysctl, "_sysctl"),
        (libc::SYS_prctl, "prctl"),
        (libc::SYS_arch_prctl, "arch_prctl"),
        (libc::SYS_adjtimex, "adjtimex"),
        (libc::SYS_setrlimit, "setrlimit"),
        (libc::SYS_chroot, "chroot"),
        (libc::SYS_sync, "sync"),
        (libc::SYS_acct, "acct"),
        (libc::SYS_settimeofday, "settimeofday"),
        (libc::SYS_mount, "mount"),
        (libc::SYS_umount2, "umount2"),
        (libc::SYS_swapon, "swapon"),
        (libc::SYS_swapoff, "swapoff"),
        (libc::SYS_reboot, "reboot"),
        (libc::SYS_sethostname, "sethostname"),
        (libc::SYS_setdomainname, "setdomainname"),
        (libc::SYS_iopl, "iopl"),
        (libc::SYS_ioperm, "ioperm"),
        (libc::SYS_init_module, "init_module"),
        (libc::SYS_delete_module, "delete_module"),
        (libc::SYS_quotactl, "quotactl"),
        (libc::SYS_nfsservctl, "nfsservctl"),
        (libc::SYS_getpmsg, "getpmsg"),
        (libc::SYS_putpmsg, "putpmsg"),
        (libc::SYS_afs_syscall, "afs_syscall"),
        (libc::SYS_tuxcall, "tuxcall"),
        (libc::SYS_security, "security"),
        (libc::SYS_gettid, "gettid"),
        (libc::SYS_readahead, "readahead"),
        (libc::SYS_setxattr, "setxattr"),
        (libc::SYS_lsetxattr, "lsetxattr"),
        (libc::SYS_fsetxattr, "fsetxattr"),
        (libc::SYS_getxattr, "getxattr"),
        (libc::SYS_lgetxattr, "lgetxattr"),
        (libc::SYS_fgetxattr, "fgetxattr"),
        (libc::SYS_listxattr, "listxattr"),
        (libc::SYS_llistxattr, "llistxattr"),
        (libc::SYS_flistxattr, "flistxattr"),
        (libc::SYS_removexattr, "removexattr"),
        (libc::SYS_lremovexattr, "lremovexattr"),
        (libc::SYS_fremovexattr, "fremovexattr"),
        (libc::SYS_tkill, "tkill"),
        (libc::SYS_time, "time"),
        (libc::SYS_futex, "futex"),
        (libc::SYS_sched_setaffinity, "sched_setaffinity"),
        (libc::SYS_sched_getaffinity, "sched_getaffinity"),
        (libc::SYS_set_thread_area, "set_thread_area"),
        (libc::SYS_io_setup, "io_setup"),
        (libc::SYS_io_destroy, "io_destroy"),
        (libc::SYS_io_getevents, "io_getevents"),
        (libc::SYS_io_submit, "io_submit"),
        (libc::SYS_io_cancel, "io_cancel"),
        (libc::SYS_get_thread_area, "get_thread_area"),
        (libc::SYS_lookup_dcookie, "lookup_dcookie"),
        (libc::SYS_epoll_create, "epoll_create"),
        (libc::SYS_epoll_ctl_old, "epoll_ctl_old"),
        (libc::SYS_epoll_wait_old, "epoll_wait_old"),
        (libc::SYS_remap_file_pages, "remap_file_pages"),
        (libc::SYS_getdents64, "getdents64"),
        (libc::SYS_set_tid_address, "set_tid_address"),
        (libc::SYS_restart_syscall, "restart_syscall"),
        (libc::SYS_semtimedop, "semtimedop"),
        (libc::SYS_fadvise64, "fadvise64"),
        (libc::SYS_timer_create, "timer_create"),
        (libc::SYS_timer_settime, "timer_settime"),
        (libc::SYS_timer_gettime, "timer_gettime"),
        (libc::SYS_timer_getoverrun, "timer_getoverrun"),
        (libc::SYS_timer_delete, "timer_delete"),
        (libc::SYS_clock_settime, "clock_settime"),
        (libc::SYS_clock_gettime, "clock_gettime"),
        (libc::SYS_clock_getres, "clock_getres"),
        (libc::SYS_clock_nanosleep, "clock_nanosleep"),
        (libc::SYS_exit_group, "exit_group"),
        (libc::SYS_epoll_wait, "epoll_wait"),
        (libc::SYS_epoll_ctl, "epoll_ctl"),
        (libc::SYS_tgkill, "tgkill"),
        (libc::SYS_utimes, "utimes"),
        (libc::SYS_vserver, "vserver"),
        (libc::SYS_mbind, "mbind"),
        (libc::SYS_set_mempolicy, "set_mempolicy"),
        (libc::SYS_get_mempolicy, "get_mempolicy"),
        (libc::SYS_mq_open, "mq_open"),
        (libc::SYS_mq_unlink, "mq_unlink"),
        (libc::SYS_mq_timedsend, "mq_timedsend"),
        (libc::SYS_mq_timedreceive, "mq_timedreceive"),
        (libc::SYS_mq_notify, "mq_notify"),
        (libc::SYS_mq_getsetattr, "mq_getsetattr"),
        (libc::SYS_kexec_load, "kexec_load"),
        (libc::SYS_waitid, "waitid"),
        (libc::SYS_add_key, "add_key"),
        (libc::SYS_request_key, "request_key"),
        (libc::SYS_keyctl, "keyctl"),
        (libc::SYS_ioprio_set, "ioprio_set"),
        (libc::SYS_ioprio_get, "ioprio_get"),
        (libc::SYS_inotify_init, "inotify_init"),
        (libc::SYS_inotify_add_watch, "inotify_add_watch"),
        (libc::SYS_inotify_rm_watch, "inotify_rm_watch"),
        (libc::SYS_migrate_pages, "migrate_pages"),
        (libc::SYS_openat, "openat"),
        (libc::SYS_mkdirat, "mkdirat"),
        (libc::SYS_mknodat, "mknodat"),
        (libc::SYS_fchownat, "fchownat"),
        (libc::SYS_futimesat, "futimesat"),
        (libc::SYS_newfstatat, "newfstatat"),
        (libc::SYS_unlinkat, "unlinkat"),
        (libc::SYS_renameat, "renameat"),
        (libc::SYS_linkat, "linkat"),
        (libc::SYS_symlinkat, "symlinkat"),
        (libc::SYS_readlinkat, "readlinkat"),
        (libc::SYS_fchmodat, "fchmodat"),
        (libc::SYS_faccessat, "faccessat"),
        (libc::SYS_pselect6, "pselect6"),
        (libc::SYS_ppoll, "ppoll"),
        (libc::SYS_unshare, "unshare"),
        (libc::SYS_set_robust_list, "set_robust_list"),
        (libc::SYS_get_robust_list, "get_robust_list"),
        (libc::SYS_splice, "splice"),
        (libc::SYS_tee, "tee"),
        (libc::SYS_sync_file_range, "sync_file_range"),
        (libc::SYS_vmsplice, "vmsplice"),
        (libc::SYS_move_pages, "move_pages"),
        (libc::SYS_utimensat, "utimensat"),
        (libc::SYS_epoll_pwait, "epoll_pwait"),
        (libc::SYS_signalfd, "signalfd"),
        (libc::SYS_timerfd_create, "timerfd_create"),
        (libc::SYS_eventfd, "eventfd"),
        (libc::SYS_fallocate, "fallocate"),
        (libc::SYS_timerfd_settime, "timerfd_settime"),
        (libc::SYS_timerfd_gettime, "timerfd_gettime"),
        (libc::SYS_accept4, "accept4"),
        (libc::SYS_signalfd4, "signalfd4"),
        (libc::SYS_eventfd2, "eventfd2"),
        (libc::SYS_epoll_create1, "epoll_create1"),
        (libc::SYS_dup3, "dup3"),
        (libc::SYS_pipe2, "pipe2"),
        (libc::SYS_inotify_init1, "inotify_init1"),
        (libc::SYS_preadv, "preadv"),
        (libc::SYS_pwritev, "pwritev"),
        (libc::SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo"),
        (libc::SYS_perf_event_open, "perf_event_open"),
        (libc::SYS_recvmmsg, "recvmmsg"),
        (libc::SYS_fanotify_init, "fanotify_init"),
        (libc::SYS_fanotify_mark, "fanotify_mark"),
        (libc::SYS_prlimit64, "prlimit64"),
        (libc::SYS_name_to_handle_at, "name_to_handle_at"),
        (libc::SYS_open_by_handle_at, "open_by_handle_at"),
        (libc::SYS_clock_adjtime, "clock_adjtime"),
        (libc::SYS_syncfs, "syncfs"),
        (libc::SYS_sendmmsg, "sendmmsg"),
        (libc::SYS_setns, "setns"),
        (libc::SYS_getcpu, "getcpu"),
        (libc::SYS_process_vm_readv, "process_vm_readv"),
        (libc::SYS_process_vm_writev, "process_vm_writev"),
        (libc::SYS_kcmp, "kcmp"),
        (libc::SYS_finit_module, "finit_module"),
        (libc::SYS_sched_setattr, "sched_setattr"),
        (libc::SYS_sched_getattr, "sched_getattr"),
        (libc::SYS_renameat2, "renameat2"),
        (libc::SYS_seccomp, "seccomp"),
        (libc::SYS_getrandom, "getrandom"),
        (libc::SYS_memfd_create, "memfd_create"),
        (libc::SYS_kexec_file_load, "kexec_file_load"),
        (libc::SYS_bpf, "bpf"),
        (libc::SYS_execveat, "execveat"),
        (libc::SYS_userfaultfd, "userfaultfd"),
        (libc::SYS_membarrier, "membarrier"),
        (libc::SYS_mlock2, "mlock2"),
        (libc::SYS_copy_file_range, "copy_file_range"),
        (libc::SYS_preadv2, "preadv2"),
        (libc::SYS_pwritev2, "pwritev2"),
        (libc::SYS_pkey_mprotect, "pkey_mprotect"),
        (libc::SYS_pkey_alloc, "pkey_alloc"),
        (libc::SYS_pkey_free, "pkey_free"),
        (libc::SYS_statx, "statx"),
        (libc::SYS_rseq, "rseq"),
        (libc::SYS_pidfd_send_signal, "pidfd_send_signal"),
        (libc::SYS_io_uring_setup, "io_uring_setup"),
        (libc::SYS_io_uring_enter, "io_uring_enter"),
        (libc::SYS_io_uring_register, "io_uring_register"),
        (libc::SYS_open_tree, "open_tree"),
        (libc::SYS_move_mount, "move_mount"),
        (libc::SYS_fsopen, "fsopen"),
        (libc::SYS_fsconfig, "fsconfig"),
        (libc::SYS_fsmount, "fsmount"),
        (libc::SYS_fspick, "fspick"),
        (libc::SYS_pidfd_open, "pidfd_open"),
        (libc::SYS_clone3, "clone3"),
        (libc::SYS_close_range, "close_range"),
        (libc::SYS_openat2, "openat2"),
        (libc::SYS_pidfd_getfd, "pidfd_getfd"),
        (libc::SYS_faccessat2, "faccessat2"),
        (libc::SYS_process_madvise, "process_madvise"),
        (libc::SYS_epoll_pwait2, "epoll_pwait2"),
        (libc::SYS_mount_setattr, "mount_setattr"),
        (libc::SYS_quotactl_fd, "quotactl_fd"),
        (libc::SYS_landlock_create_ruleset, "landlock_create_ruleset"),
        (libc::SYS_landlock_add_rule, "landlock_add_rule"),
        (libc::SYS_landlock_restrict_self, "landlock_restrict_self"),
        (libc::SYS_memfd_secret, "memfd_secret"),
        (libc::SYS_process_mrelease, "process_mrelease"),
        (libc::SYS_futex_waitv, "futex_waitv"),
        (libc::SYS_set_mempolicy_home_node, "set_mempolicy_home_node"),
        (libc::SYS_fchmodat2, "fchmodat2"),
        (libc::SYS_mseal, "mseal"),
    ]
}

#[test]
fn numbers_agree_with_libc() {
    let list = libc_syscalls();
    assert!(list.len() > 350);
    for (nr, name) in list {
        let row = by_name(name).unwrap_or_else(|| panic!("{name} missing from the catalogue"));
        assert_eq!(i64::from(row.nr), nr, "{name}");
        assert_eq!(by_nr(row.nr).map(|r| r.name), Some(name));
    }
}

#[test]
fn every_number_has_one_row_sorted_and_unique() {
    let rows = all();
    let numbers: Vec<u32> = rows.iter().map(|r| r.nr).collect();
    let expected: Vec<u32> = (0..=334).chain(424..=469).collect();
    assert_eq!(
        numbers, expected,
        "rows must cover 0..=334 and 424..=469 in order, once each"
    );
    let mut names: Vec<&str> = rows.iter().map(|r| r.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), rows.len(), "names must be unique");
    assert!(by_nr(335).is_none() && by_nr(470).is_none());
}

/// A length taken from an argument must name an integer argument.
fn check_len(call: &str, params: &[reanimator_catalogue::Param], len: Len) {
    match len {
        Len::Arg(i) | Len::ArgTimes(i, _) => {
            let p = params
                .get(i as usize)
                .unwrap_or_else(|| panic!("{call}: length from missing argument {i}"));
            assert!(
                matches!(p.kind, Kind::Size | Kind::UInt | Kind::Int),
                "{call}: length argument {} is {:?}",
                p.name,
                p.kind
            );
        }
        Len::ArgPtr(i) => {
            let p = params
                .get(i as usize)
                .unwrap_or_else(|| panic!("{call}: length pointer {i} missing"));
            assert!(
                matches!(p.kind, Kind::Struct { .. } | Kind::Ptr),
                "{call}: length pointer {} is {:?}",
                p.name,
                p.kind
            );
        }
        Len::Fixed(n) => assert!(n > 0, "{call}: zero fixed length"),
        Len::Ret => {}
    }
}

#[test]
fn every_memory_argument_has_a_size_rule() {
    for row in all().iter().filter(|r| r.is_decoded()) {
        let params = row.params();
        assert!(params.len() <= 6, "{}: more than six parameters", row.name);
        for p in params {
            match p.kind {
                Kind::Buf { len, .. } | Kind::Struct { len, .. } => {
                    check_len(row.name, params, len)
                }
                Kind::IoVec { count, .. } | Kind::IoCbs { count } => {
                    let c = params
                        .get(count as usize)
                        .unwrap_or_else(|| panic!("{}: iovec count missing", row.name));
                    assert!(
                        matches!(c.kind, Kind::Int | Kind::UInt),
                        "{}: iovec count is {:?}",
                        row.name,
                        c.kind
                    );
                }
                _ => {}
            }
        }
    }
}

#[test]
fn size_rules_of_key_calls() {
    let kind = |call: &str, i: usize| by_name(call).unwrap().params()[i].kind;
    assert_eq!(
        kind("write", 1),
        Kind::Buf {
            dir: reanimator_catalogue::Dir::In,
            len: Len::Arg(2)
        }
    );
    assert_eq!(
        kind("read", 1),
        Kind::Buf {
            dir: reanimator_catalogue::Dir::Out,
            len: Len::Ret
        }
    );
    assert_eq!(
        kind("pread64", 1),
        Kind::Buf {
            dir: reanimator_catalogue::Dir::Out,
            len: Len::Ret
        }
    );
    assert_eq!(
        kind("pwrite64", 1),
        Kind::Buf {
            dir: reanimator_catalogue::Dir::In,
            len: Len::Arg(2)
        }
    );
    for (call, arg, size) in [
        ("stat", 1, 144),
        ("fstat", 1, 144),
        ("lstat", 1, 144),
        ("newfstatat", 2, 144),
        ("statx", 4, 256),
        ("statfs", 1, 120),
    ] {
        match kind(call, arg) {
            Kind::Struct {
                len: Len::Fixed(n),
                dir: reanimator_catalogue::Dir::Out,
                ..
            } => assert_eq!(n, size, "{call}"),
            k => panic!("{call}: {k:?}"),
        }
    }
    assert!(matches!(
        kind("writev", 1),
        Kind::IoVec {
            dir: reanimator_catalogue::Dir::In,
            count: 2
        }
    ));
    assert!(matches!(
        kind("preadv2", 1),
        Kind::IoVec {
            dir: reanimator_catalogue::Dir::Out,
            count: 2
        }
    ));
    assert!(matches!(
        kind("sendmsg", 1),
        Kind::MsgHdr {
            dir: reanimator_catalogue::Dir::In
        }
    ));
    assert!(matches!(
        kind("getdents64", 1),
        Kind::Struct { len: Len::Ret, .. }
    ));
    assert!(matches!(
        kind("accept4", 1),
        Kind::Struct {
            len: Len::ArgPtr(2),
            ..
        }
    ));
    assert_eq!(kind("openat", 0), Kind::DirFd);
    assert_eq!(kind("openat", 1), Kind::Path);
    assert_eq!(kind("execve", 1), Kind::StrArray);
}

#[test]
fn required_calls_are_decoded() {
    let required = [
        "openat2",
        "statx",
        "newfstatat",
        "getdents64",
        "pread64",
        "pwrite64",
        "preadv",
        "pwritev",
        "preadv2",
        "pwritev2",
        "copy_file_range",
        "sendfile",
        "splice",
        "tee",
        "fallocate",
        "sync_file_range",
        "syncfs",
        "renameat",
        "renameat2",
        "faccessat2",
        "fchownat",
        "fchmodat2",
        "mknodat",
        "symlinkat",
        "linkat",
        "unlinkat",
        "utimensat",
        "close_range",
        "dup3",
        "pipe2",
        "memfd_create",
        "eventfd2",
        "flock",
        "fcntl",
        "ioctl",
        "mmap",
        "munmap",
        "mremap",
        "msync",
        "clone",
        "clone3",
        "fork",
        "vfork",
        "execve",
        "execveat",
        "exit",
        "exit_group",
        "wait4",
        "socket",
        "connect",
        "accept",
        "accept4",
        "bind",
        "listen",
        "sendto",
        "recvfrom",
        "sendmsg",
        "recvmsg",
        "read",
        "write",
        "open",
        "close",
        "stat",
        "fstat",
        "lstat",
        "lseek",
        "readv",
        "writev",
        "access",
        "pipe",
        "dup",
        "dup2",
        "fsync",
        "fdatasync",
        "truncate",
        "ftruncate",
        "getdents",
        "rename",
        "mkdir",
        "rmdir",
        "creat",
        "link",
        "unlink",
        "symlink",
        "readlink",
        "chmod",
        "fchmod",
        "chown",
        "fchown",
        "lchown",
        "umask",
        "statfs",
        "fstatfs",
        "setxattr",
        "getxattr",
        "listxattr",
        "removexattr",
        "utime",
        "utimes",
        "mkdirat",
        "readlinkat",
        "fchmodat",
        "faccessat",
        "chdir",
        "fchdir",
        "getcwd",
    ];
    for name in required {
        assert!(
            by_name(name)
                .unwrap_or_else(|| panic!("{name} missing"))
                .is_decoded(),
            "{name} is not decoded"
        );
    }
    let decoded = all().iter().filter(|r| r.is_decoded()).count();
    assert!(decoded >= 110, "only {decoded} decoded rows");
}

#[test]
fn replay_classes() {
    let class = |n: &str| by_name(n).unwrap().replay;
    for n in [
        "read",
        "write",
        "openat",
        "close",
        "rename",
        "fsync",
        "getdents64",
        "setxattr",
        "fallocate",
        "pwritev2",
    ] {
        assert_eq!(class(n), Replay::Execute, "{n}");
    }
    for n in [
        "clone",
        "fork",
        "vfork",
        "execve",
        "exit_group",
        "wait4",
        "getpid",
        "socket",
        "connect",
    ] {
        assert_eq!(class(n), Replay::Emulate, "{n}");
    }
    assert_eq!(class("nanosleep"), Replay::Simulate);
    assert_eq!(class("getuid"), Replay::Ignore);
}

/// Followers of process state find an effect's details in the parameter
/// kinds, so every row with an effect must have the kinds it needs.
#[test]
fn effects_have_the_arguments_their_followers_read() {
    let fd_pair = |k: &Kind| {
        matches!(
            k,
            Kind::Struct {
                ty: StructType::FdPair,
                ..
            }
        )
    };
    let pseudo = reanimator_catalogue::pseudo_calls().iter();
    for s in all()
        .iter()
        .chain(command_rows().iter().map(|(_, r)| r))
        .chain(pseudo)
    {
        let kinds: Vec<Kind> = s.params().iter().map(|p| p.kind).collect();
        let has = |k: Kind| kinds.contains(&k);
        let ok = match s.effect {
            Effect::None => true,
            Effect::Open => s.param_of(Kind::Path).is_some(),
            Effect::Close | Effect::Dup | Effect::Fcntl | Effect::ReceiveFds => {
                kinds.first() == Some(&Kind::Fd)
            }
            Effect::CloseRange => kinds.starts_with(&[Kind::Fd, Kind::Fd]),
            Effect::Pipe => kinds.first().is_some_and(fd_pair),
            Effect::Map => s.param_of(Kind::Fd) == Some(4),
            Effect::Unmap | Effect::Sync | Effect::Advise => {
                matches!(kinds.first(), Some(Kind::Mapped { .. }))
            }
            Effect::Remap | Effect::Umask | Effect::Exec | Effect::EndProcess => !kinds.is_empty(),
            Effect::Chdir => kinds == [Kind::Path] || kinds == [Kind::Fd],
            Effect::Chroot => kinds == [Kind::Path],
            Effect::Move => kinds.iter().filter(|k| **k == Kind::Path).count() == 2,
            Effect::Remove => kinds.iter().filter(|k| **k == Kind::Path).count() == 1,
            Effect::Clone => kinds.first() == Some(&Kind::Fd) && kinds.last() == Some(&Kind::Fd),
            Effect::Allocate => {
                kinds
                    == [
                        Kind::Fd,
                        Kind::Flags(FlagSet::Falloc),
                        Kind::Offset,
                        Kind::Offset,
                    ]
            }
            Effect::Seccomp(ops) => s.params.is_none() && !ops.is_empty(),
            Effect::Prctl => s.params.is_none() && s.name == "prctl",
            Effect::Unshare => kinds == vec![Kind::Flags(FlagSet::Clone)],
            Effect::PidFd => {
                kinds.first() == Some(&Kind::Pid) && s.ret == reanimator_catalogue::Ret::Fd
            }
            Effect::GetFd => {
                kinds.first() == Some(&Kind::Fd) && s.ret == reanimator_catalogue::Ret::Fd
            }
            Effect::CloseOnExec(_) => s.name == "ioctl" && kinds.first() == Some(&Kind::Fd),
            Effect::ShowsCpus | Effect::SetsCpus => {
                kinds.first() == Some(&Kind::Pid) && matches!(kinds.get(2), Some(Kind::Buf { .. }))
            }
            Effect::Accept => {
                kinds.first() == Some(&Kind::Fd) && s.ret == reanimator_catalogue::Ret::Fd
            }
            Effect::Bind | Effect::Connect => {
                kinds.first() == Some(&Kind::Fd)
                    && matches!(
                        kinds.get(1),
                        Some(Kind::Struct {
                            ty: StructType::Sockaddr,
                            ..
                        })
                    )
            }
            Effect::SetIds(ids) => {
                let n = match ids {
                    Ids::User(w) | Ids::Group(w) => match w {
                        Which::One | Which::FileSystem => 1,
                        Which::RealEffective => 2,
                        Which::RealEffectiveSaved => 3,
                    },
                };
                kinds == vec![Kind::Id; n]
            }
            Effect::SetGroups => matches!(
                kinds.get(1),
                Some(Kind::Struct {
                    ty: StructType::Gids,
                    dir: Dir::In,
                    len: Len::ArgTimes(0, 4),
                })
            ),
            Effect::SetCaps => {
                kinds
                    == vec![
                        Kind::Struct {
                            ty: StructType::CapHeader,
                            dir: Dir::In,
                            len: Len::Fixed(8),
                        },
                        Kind::Struct {
                            ty: StructType::CapData,
                            dir: Dir::In,
                            len: Len::Fixed(24),
                        },
                    ]
            }
            Effect::AioSetup => matches!(
                kinds.get(1),
                Some(Kind::Struct {
                    ty: StructType::AioContext,
                    dir: Dir::Out,
                    ..
                })
            ),
            // Every Linux AIO call names its context first.
            Effect::AioDestroy => kinds.first() == Some(&Kind::Hex),
            Effect::UringSetup => {
                s.ret == reanimator_catalogue::Ret::Fd
                    && matches!(
                        kinds.get(1),
                        Some(Kind::Struct {
                            ty: StructType::UringParams,
                            dir: Dir::InOut,
                            ..
                        })
                    )
            }
            // Replay reads the opcode from argument 1 and the files from
            // argument 2, `nr_args` (argument 3) ints long.
            Effect::UringRegister => {
                kinds.first() == Some(&Kind::Fd)
                    && kinds.get(1) == Some(&Kind::Flags(FlagSet::UringRegister))
                    && matches!(
                        kinds.get(2),
                        Some(Kind::Struct {
                            ty: StructType::Fds,
                            dir: Dir::In,
                            len: Len::ArgTimes(3, 4),
                        })
                    )
            }
            Effect::Spawn(implied) => {
                kinds.is_empty()
                    || has(Kind::Flags(FlagSet::Clone)) && implied == 0
                    || matches!(
                        kinds.first(),
                        Some(Kind::Struct {
                            ty: StructType::CloneArgs,
                            ..
                        })
                    )
            }
        };
        assert!(ok, "{s}: {:?}", s.effect);
    }
    let effect = |n: &str| by_name(n).unwrap().effect;
    assert_eq!(effect("openat2"), Effect::Open);
    let query = |n: &str| by_name(n).unwrap().groups & Group::QUERY != 0;
    assert!(query("pread64") && query("lseek") && query("statx") && query("faccessat2"));
    assert!(!query("read") && !query("getdents64") && !query("pwrite64"));
    assert_eq!(
        effect("setresgid"),
        Effect::SetIds(Ids::Group(Which::RealEffectiveSaved))
    );
    assert_eq!(
        effect("setfsuid"),
        Effect::SetIds(Ids::User(Which::FileSystem))
    );
    assert_eq!(effect("fchdir"), Effect::Chdir);
    for n in ["rename", "renameat", "renameat2"] {
        assert_eq!(effect(n), Effect::Move, "{n}");
    }
    for n in ["unlink", "unlinkat", "rmdir"] {
        assert_eq!(effect(n), Effect::Remove, "{n}");
    }
    assert_eq!(effect("fork"), Effect::Spawn(0));
    assert_eq!(effect("exit_group"), Effect::EndProcess);
    assert_eq!(
        effect("exit"),
        Effect::None,
        "one thread's end keeps the address space"
    );
    assert_eq!(
        effect("vfork"),
        Effect::Spawn((libc::CLONE_VM | libc::CLONE_VFORK) as u64)
    );
    assert_eq!(effect("socketpair"), Effect::None);
    assert_eq!(effect("connect"), Effect::Connect);
    for n in ["accept", "accept4"] {
        assert_eq!(effect(n), Effect::Accept, "{n}");
    }
    let creat = by_name("creat").unwrap().open_flags(&[0; 6]);
    assert_eq!(
        creat,
        Some((libc::O_CREAT | libc::O_WRONLY | libc::O_TRUNC) as u64)
    );
    assert_eq!(by_name("openat2").unwrap().open_flags(&[0; 6]), None);
    let openat = |flags: i32| {
        by_name("openat")
            .unwrap()
            .open_flags(&[0, 0, flags as u64, 0, 0, 0])
    };
    assert_eq!(openat(libc::O_RDWR | libc::O_CREAT), Some(0o102));
    // Bits no flag uses go (dd's skip_bytes), as the kernel drops them.
    assert_eq!(openat(libc::O_WRONLY | 0xc), Some(1));
    assert_eq!(
        openat(libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC),
        Some((libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC) as u64)
    );
    // O_PATH keeps only O_DIRECTORY, O_NOFOLLOW and O_CLOEXEC.
    assert_eq!(
        openat(libc::O_PATH | libc::O_RDWR | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_TRUNC),
        Some((libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64)
    );
    let cloexec = |n: &str, args: [u64; 6]| by_name(n).unwrap().cloexec(&args);
    let o = libc::O_CLOEXEC as u64;
    assert!(cloexec("openat", [0, 0, o, 0, 0, 0]));
    assert!(!cloexec("openat", [0, 0, 0, 0, 0, 0]));
    assert!(cloexec(
        "socket",
        [1, libc::SOCK_CLOEXEC as u64 | 1, 0, 0, 0, 0]
    ));
    assert!(cloexec(
        "memfd_create",
        [0, libc::MFD_CLOEXEC as u64, 0, 0, 0, 0]
    ));
    assert!(cloexec(
        "timerfd_create",
        [1, libc::TFD_CLOEXEC as u64, 0, 0, 0, 0]
    ));
    assert!(!cloexec("creat", [0, 0o777, 0, 0, 0, 0]));
}

#[test]
fn signatures_read_like_the_man_pages() {
    assert_eq!(
        by_name("read").unwrap().to_string(),
        "read(fd: fd, buf: out[ret], count: size) -> size [execute]"
    );
    assert_eq!(
        by_name("openat").unwrap().to_string(),
        "openat(dirfd: dirfd, pathname: path, flags: flags:open, mode: createmode) -> fd [execute]"
    );
    assert_eq!(
        by_name("getppid").unwrap().to_string(),
        "getppid() -> pid [emulate]"
    );
    assert!(by_name("futex")
        .unwrap()
        .to_string()
        .starts_with("futex(...)"));
}

#[test]
fn flags_decode() {
    assert_eq!(FlagSet::Open.decode(0o1101), "O_WRONLY|O_CREAT|O_TRUNC");
    assert_eq!(FlagSet::Open.decode(0o4010002), "O_RDWR|O_SYNC");
    assert_eq!(FlagSet::Open.decode(0o10001), "O_WRONLY|O_DSYNC");
    assert_eq!(FlagSet::Open.decode(0o20200002), "O_RDWR|O_TMPFILE");
    assert_eq!(
        FlagSet::Open.decode(0o2200000),
        "O_RDONLY|O_DIRECTORY|O_CLOEXEC"
    );
    assert_eq!(
        FlagSet::Open.decode(0o1 | 0x8000_0000),
        "O_WRONLY|0x80000000"
    );
    assert_eq!(FlagSet::Map.decode(0x22), "MAP_PRIVATE|MAP_ANONYMOUS");
    assert_eq!(
        FlagSet::Map.decode(0x812),
        "MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE"
    );
    assert_eq!(FlagSet::Whence.decode(2), "SEEK_END");
    assert_eq!(FlagSet::Whence.decode(9), "0x9");
    assert_eq!(
        FlagSet::Clone.decode(0x1200011),
        "SIGCHLD|CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID"
    );
    // clone3's flags hold no exit signal: 0x80 is CLONE_NEWTIME.
    assert_eq!(FlagSet::Clone3.decode(0x4100), "CLONE_VM|CLONE_VFORK");
    assert_eq!(
        FlagSet::Clone3.decode(0x2_0000_0080),
        "CLONE_NEWTIME|CLONE_INTO_CGROUP"
    );
    assert_eq!(FlagSet::Clone3.decode(0), "0");
    assert_eq!(
        FlagSet::SockType.decode(0o2000001),
        "SOCK_STREAM|SOCK_CLOEXEC"
    );
    assert_eq!(FlagSet::Access.decode(0), "F_OK");
    assert_eq!(FlagSet::Access.decode(6), "R_OK|W_OK");
    assert_eq!(FlagSet::Fcntl.decode(1030), "F_DUPFD_CLOEXEC");
    assert_eq!(FlagSet::At.decode(0x100), "AT_SYMLINK_NOFOLLOW");
    assert_eq!(FlagSet::Flock.decode(6), "LOCK_EX|LOCK_NB");
    assert_eq!(FlagSet::Prot.decode(0), "0");
}

#[test]
fn every_flag_table_is_usable() {
    let sets = [
        FlagSet::Open,
        FlagSet::At,
        FlagSet::Prot,
        FlagSet::Map,
        FlagSet::Whence,
        FlagSet::Clone,
        FlagSet::Clone3,
        FlagSet::Fcntl,
        FlagSet::Flock,
        FlagSet::Falloc,
        FlagSet::Rename,
        FlagSet::Xattr,
        FlagSet::Msg,
        FlagSet::AddressFamily,
        FlagSet::SockType,
        FlagSet::Access,
        FlagSet::Msync,
        FlagSet::Mremap,
        FlagSet::SyncFileRange,
        FlagSet::Fadvise,
        FlagSet::Madvise,
        FlagSet::Wait,
        FlagSet::Cloexec,
        FlagSet::StatxMask,
        FlagSet::Rwf,
        FlagSet::Memfd,
        FlagSet::Splice,
        FlagSet::CloseRange,
        FlagSet::Resolve,
        FlagSet::Ioctl,
        FlagSet::Fanotify,
        FlagSet::PerfEvent,
        FlagSet::Fsopen,
    ];
    let mut names: Vec<&str> = sets.iter().map(|s| s.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), sets.len(), "each set has its own table");
    for set in sets {
        let t = set.table();
        assert!(!t.entries.is_empty(), "{}", t.name);
        let mut values: Vec<u64> = t.entries.iter().map(|e| e.0).collect();
        values.sort_unstable();
        values.dedup();
        assert_eq!(
            values.len(),
            t.entries.len(),
            "{}: duplicate values",
            t.name
        );
        // Each named entry decodes back to its own name.
        for &(v, n) in t.entries {
            if t.enumerated || v != 0 {
                assert!(
                    set.decode(v).contains(n) || t.low.is_some(),
                    "{}: {n}",
                    t.name
                );
            }
        }
    }
}

#[test]
fn calls_on_directory_entries_do_not_follow_final_links() {
    for n in [
        "lstat",
        "unlink",
        "unlinkat",
        "rmdir",
        "mkdir",
        "rename",
        "renameat2",
        "link",
        "symlink",
        "readlink",
        "lchown",
        "lsetxattr",
    ] {
        assert!(by_name(n).unwrap().in_groups(Group::NOFOLLOW), "{n}");
    }
    for n in [
        "stat",
        "open",
        "openat",
        "chmod",
        "truncate",
        "setxattr",
        "newfstatat",
        "execve",
    ] {
        assert!(!by_name(n).unwrap().in_groups(Group::NOFOLLOW), "{n}");
    }
    // The umask applies to the mode of calls that create files, not chmod.
    for n in [
        "open", "openat", "creat", "mkdir", "mkdirat", "mknod", "mknodat",
    ] {
        assert!(
            by_name(n)
                .unwrap()
                .params()
                .iter()
                .any(|p| p.kind == Kind::CreateMode),
            "{n}"
        );
    }
    for n in ["chmod", "fchmod", "fchmodat"] {
        assert!(
            !by_name(n)
                .unwrap()
                .params()
                .iter()
                .any(|p| p.kind == Kind::CreateMode),
            "{n}"
        );
    }
    // A symlink's target is text, never resolved.
    assert_eq!(by_name("symlink").unwrap().params()[0].kind, Kind::Str);
}

/// An `ioctl` request row shows and replays its arguments as what they
/// are, but the recorders capture by call number alone: a request row
/// must name no memory the generic row does not.
#[test]
fn command_rows_refine_without_capturing_more() {
    let memory = |k: Kind| {
        matches!(
            k,
            Kind::Path
                | Kind::Str
                | Kind::StrArray
                | Kind::Buf { .. }
                | Kind::Struct { .. }
                | Kind::IoVec { .. }
                | Kind::MsgHdr { .. }
                | Kind::Mapped { .. }
                | Kind::IoCbs { .. }
                | Kind::IoEvents
        )
    };
    for name in ["ioctl", "fcntl"] {
        assert!(command_rows().iter().any(|(_, r)| r.name == name), "{name}");
    }
    for (command, row) in command_rows() {
        let generic = by_nr(row.nr).unwrap();
        assert_eq!(row.name, generic.name);
        // Fewer only where the command takes no argument (fcntl F_GETFD).
        assert!(row.params().len() <= generic.params().len(), "{row}");
        assert!(row.params().len() >= 2, "{row}");
        for (p, g) in row.params().iter().zip(generic.params()) {
            assert!(!memory(p.kind) || memory(g.kind), "{row}: {}", p.name);
        }
        if row.name == "fcntl" {
            // Only shown otherwise: replayed as the generic row.
            assert_eq!(
                (row.effect, row.ret, row.replay),
                (generic.effect, generic.ret, generic.replay)
            );
        }
        let args = [3, *command, 4, 0, 0, 0];
        assert!(std::ptr::eq(by_call(row.nr, &args).unwrap(), row));
        // The kernel reads the command as 32 bits.
        let high = [3, *command | 0xffff_ffff_0000_0000, 4, 0, 0, 0];
        assert!(std::ptr::eq(by_call(row.nr, &high).unwrap(), row));
    }
    let generic = by_name("ioctl").unwrap();
    let clone = by_call(16, &[3, FICLONE, 4, 0, 0, 0]).unwrap();
    assert_eq!(clone.effect, Effect::Clone);
    assert_eq!(clone.replay, Replay::Execute);
    assert!(std::ptr::eq(
        by_call(16, &[1, 0x5401, 0, 0, 0, 0]).unwrap(),
        generic
    ));
    assert!(std::ptr::eq(
        by_call(0, &[0; 6]).unwrap(),
        by_name("read").unwrap()
    ));
    assert_eq!(FlagSet::Ioctl.decode(FICLONE), "FICLONE");
    // A pseudo-terminal's other end is a new descriptor, close-on-exec
    // when its flags say so.
    let peer = by_call(16, &[3, TIOCGPTPEER, 0x102, 0, 0, 0]).unwrap();
    assert_eq!(peer.ret, Ret::Fd);
    assert!(!peer.cloexec(&[3, TIOCGPTPEER, 0x102, 0, 0, 0]));
    assert!(peer.cloexec(&[3, TIOCGPTPEER, 0x80102, 0, 0, 0]));
}

#[test]
fn asynchronous_io_calls_are_one_group() {
    for n in [
        "io_setup",
        "io_submit",
        "io_getevents",
        "io_uring_setup",
        "io_uring_enter",
    ] {
        assert!(by_name(n).unwrap().in_groups(Group::AIO), "{n}");
    }
    for n in ["read", "pwrite64", "ioctl", "preadv2"] {
        assert!(!by_name(n).unwrap().in_groups(Group::AIO), "{n}");
    }
    // Linux AIO and io_uring are captured and replayed; cancelling and
    // io_uring's registered resources are not.
    let unseen = |n: &str| by_name(n).unwrap().io_unseen();
    assert!(!unseen("io_submit") && !unseen("io_getevents") && !unseen("io_pgetevents"));
    assert!(!unseen("io_uring_enter") && !unseen("io_uring_setup"));
    assert!(!unseen("io_uring_register") && unseen("io_cancel") && !unseen("read"));
    let enter = by_name("io_uring_enter").unwrap();
    assert_eq!(enter.params()[1].kind, Kind::UringSubmit);
    assert_eq!(enter.params()[2].kind, Kind::UringComplete);
    assert_eq!(
        by_name("io_uring_setup").unwrap().effect,
        Effect::UringSetup
    );
    let submit = by_name("io_submit").unwrap();
    assert_eq!(submit.params()[2].kind, Kind::IoCbs { count: 1 });
    assert_eq!(submit.replay, Replay::Execute);
    assert_eq!(
        by_name("io_getevents").unwrap().params()[3].kind,
        Kind::IoEvents
    );
    assert_eq!(by_name("io_setup").unwrap().effect, Effect::AioSetup);
}

#[test]
fn pseudo_calls_are_numbered_above_every_real_call_and_found_by_number_and_name() {
    let real_max = all().iter().map(|r| r.nr).max().unwrap();
    assert!(reanimator_catalogue::PSEUDO_BASE > real_max);
    for row in reanimator_catalogue::pseudo_calls() {
        assert!(row.nr >= reanimator_catalogue::PSEUDO_BASE, "{}", row.name);
        assert_eq!(by_nr(row.nr).map(|r| r.name), Some(row.name));
        assert_eq!(by_name(row.name).map(|r| r.nr), Some(row.nr));
    }
    let m = by_nr(reanimator_catalogue::MAPPED_AT_EXIT).unwrap();
    assert_eq!(m.name, "mapped_at_exit");
    assert!(matches!(m.params()[0].kind, Kind::Mapped { len: 1 }));
    assert_eq!(m.effect, Effect::Sync);
}

/// A Unix address names a file only with a path: not an abstract name
/// (leading NUL), not an unnamed address, not another family.
#[test]
fn unix_socket_paths_are_named_addresses_only() {
    use reanimator_catalogue::unix_socket_path;
    let unix = |rest: &[u8]| [&(libc::AF_UNIX as u16).to_le_bytes()[..], rest].concat();
    assert_eq!(
        unix_socket_path(&unix(b"run/s.sock\0junk")),
        Some(&b"run/s.sock"[..])
    );
    assert_eq!(unix_socket_path(&unix(b"no-nul")), Some(&b"no-nul"[..]));
    assert_eq!(unix_socket_path(&unix(b"\0abstract")), None);
    assert_eq!(unix_socket_path(&unix(b"")), None);
    let inet = [
        &(libc::AF_INET as u16).to_le_bytes()[..],
        b"\x1f\x90\x7f\0\0\x01",
    ]
    .concat();
    assert_eq!(unix_socket_path(&inet), None);
    assert_eq!(unix_socket_path(b"\x01"), None);
}

/// Every call that makes a descriptor says whether it is close-on-exec:
/// its `*_CLOEXEC` flag, or always, and replay's `execve` keeps what the
/// kernel's keeps (`userfaultfd`, `fanotify_init`, `perf_event_open`,
/// `fsopen`, `memfd_secret` and `mq_open` once had their flags shown as
/// bare hex, and their descriptors outlived an exec in replay).
#[test]
fn descriptor_makers_say_close_on_exec() {
    use reanimator_catalogue::by_name;
    let cases: [(&str, usize, u64); 9] = [
        ("userfaultfd", 0, libc::O_CLOEXEC as u64),
        ("memfd_secret", 0, libc::O_CLOEXEC as u64),
        ("fanotify_init", 0, 1),
        ("perf_event_open", 4, 8),
        ("fsopen", 1, 1),
        ("memfd_create", 1, 1),
        ("openat", 2, libc::O_CLOEXEC as u64),
        ("mq_open", 1, libc::O_CLOEXEC as u64),
        ("pidfd_open", 1, 0),
    ];
    for (name, arg, bit) in cases {
        let row = by_name(name).expect(name);
        let mut args = [0u64; 6];
        args[arg] = bit;
        assert!(row.cloexec(&args), "{name} with its flag");
        args[arg] = 0;
        let always = ["pidfd_open", "mq_open"].contains(&name);
        assert_eq!(row.cloexec(&args), always, "{name} without");
    }
}

/// A call's return is a new descriptor unless its flags ask for a number:
/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`
/// returns the ABI version, which replay must not take for a descriptor.
#[test]
fn landlock_version_query_makes_no_descriptor() {
    use reanimator_catalogue::by_name;
    let landlock = by_name("landlock_create_ruleset").unwrap();
    assert!(landlock.makes_descriptor(&[0x1000, 16, 0, 0, 0, 0]));
    assert!(!landlock.makes_descriptor(&[0, 0, 1, 0, 0, 0]));
    assert!(!landlock.makes_descriptor(&[0, 0, 2, 0, 0, 0]));
    assert!(by_name("open_tree").unwrap().makes_descriptor(&[0; 6]));
    assert!(!by_name("read").unwrap().makes_descriptor(&[0; 6]));
}
