use drhook::drhook;

trait Physics {
    #[drhook]
    fn run(&self);
}

fn main() {}
