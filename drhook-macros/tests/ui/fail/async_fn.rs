use drhook::drhook;

#[drhook]
async fn fetch() -> u32 {
    1
}

fn main() {
    let _ = fetch();
}
