//! The shared library's SONAME: `libmvnmf.so.<major>` (`0` while the crate is
//! 0.x), so that programs record `libmvnmf.so.0`, not a bare `libmvnmf.so`,
//! and the installed symlinks (`CMakeLists.txt`) resolve it. Only on ELF
//! targets; exports need no version script of ours: rustc links a cdylib
//! with its own (the `#[no_mangle]` items global, `local: *`), and
//! `packaging/check.sh` checks with `nm -D` that only `mvnmf_*` is exported.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let elf = matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly" | "illumos"
    );
    if elf {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap();
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmvnmf.so.{major}");
    }
}
