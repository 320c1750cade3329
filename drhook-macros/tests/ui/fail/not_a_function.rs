use drhook::drhook;

#[drhook]
struct Model {
    n: u32,
}

fn main() {
    let _ = Model { n: 1 }.n;
}
