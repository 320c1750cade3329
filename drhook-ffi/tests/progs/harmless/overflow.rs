//! A Rust program whose main thread overflows its stack: the standard
//! library's handler prints its message and aborts (SIGABRT).
use std::hint::black_box;

fn deep(n: u64) -> u64 {
    let a = black_box([n; 256]);
    if black_box(n) == u64::MAX {
        return 0;
    }
    black_box(deep(a[(n % 256) as usize] + 1)) + a[0]
}

fn main() {
    println!("going deep");
    println!("{}", deep(black_box(0)));
}
