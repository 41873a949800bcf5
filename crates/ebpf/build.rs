//! Compiles the BPF program and generates its skeleton. The kernel types
//! come from the build machine's BTF (`/sys/kernel/btf/vmlinux`, or the
//! file named by `REANIMATOR_VMLINUX_BTF`) through `bpftool`; CO-RE
//! relocations make the object run on other kernels.

use std::env;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let btf = env::var_os("REANIMATOR_VMLINUX_BTF")
        .unwrap_or_else(|| OsString::from("/sys/kernel/btf/vmlinux"));
    println!("cargo:rerun-if-env-changed=REANIMATOR_VMLINUX_BTF");
    println!("cargo:rerun-if-changed=src/bpf");
    let bpftool = ["bpftool", "/usr/sbin/bpftool"]
        .into_iter()
        .find(|b| Command::new(b).arg("version").output().is_ok())
        .unwrap_or_else(|| {
            panic!("bpftool not found: it generates vmlinux.h for the eBPF recorder; run scripts/install-deps.sh (Debian package bpftool)")
        });
    let dump = Command::new(bpftool)
        .args(["btf", "dump", "file"])
        .arg(&btf)
        .args(["format", "c"])
        .output()
        .expect("bpftool runs");
    if !dump.status.success() {
        panic!(
            "bpftool could not read the kernel's BTF at {}: {}",
            PathBuf::from(&btf).display(),
            String::from_utf8_lossy(&dump.stderr)
        );
    }
    std::fs::write(out.join("vmlinux.h"), &dump.stdout).expect("write vmlinux.h");
    libbpf_cargo::SkeletonBuilder::new()
        .source("src/bpf/recorder.bpf.c")
        .clang_args([
            OsString::from("-I"),
            out.clone().into_os_string(),
            OsString::from("-mcpu=v3"),
            OsString::from("-Wall"),
        ])
        .build_and_generate(out.join("recorder.skel.rs"))
        .unwrap_or_else(|e| panic!("cannot build the BPF program: {e:#}"));
}
