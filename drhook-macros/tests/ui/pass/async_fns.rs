use drhook::drhook;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

#[drhook]
async fn fetch(x: u32) -> u32 {
    x + 1
}

#[drhook(name = "IO:READ")]
async fn question(s: &str) -> Result<u32, Box<dyn std::error::Error>> {
    let v: u32 = s.parse()?;
    if v == 0 {
        return Err("zero".into());
    }
    Ok(fetch(v).await)
}

#[drhook]
async fn unit(mut v: Vec<u32>) {
    v.push(1);
    if v.len() > 10 {
        return;
    }
}

#[drhook]
async fn opaque() -> impl std::fmt::Display {
    7
}

struct Client {
    base: u32,
}

impl Client {
    #[drhook]
    async fn get(&self, k: u32) -> u32 {
        self.base + fetch(k).await
    }

    #[drhook]
    async fn make() -> Self {
        Client { base: 1 }
    }
}

fn require_send<T: Send>(t: T) -> T {
    t
}

fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn main() {
    assert_eq!(block_on(require_send(fetch(1))), 2);
    assert_eq!(block_on(question("41")).unwrap(), 42);
    assert!(block_on(question("x")).is_err());
    block_on(unit(vec![]));
    assert_eq!(block_on(opaque()).to_string(), "7");
    let c = block_on(Client::make());
    assert_eq!(block_on(require_send(c.get(1))), 3);
}
