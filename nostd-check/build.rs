fn main() {
    // libc provides the start files (which call `main`), memcpy/memset and exit.
    println!("cargo:rustc-link-arg-bins=-lc");
}
