// A guard held across `.await` would leave a region open on a thread while
// the task is suspended (and perhaps resumed elsewhere). Guards are `!Send`,
// so a future that holds one across `.await` cannot be spawned on a
// multi-threaded runtime: use `#[drhook]` on the `async fn` instead.
async fn work() {}

fn spawn<F: std::future::Future + Send + 'static>(_f: F) {}

fn main() {
    spawn(async {
        let _g = drhook::scope!("HELD:ACROSS:AWAIT");
        work().await;
    });
}
