use drhook::drhook;

#[drhook(label = "X")]
fn unknown_argument() {}

#[drhook(name = 42)]
fn name_not_a_string() {}

#[drhook(name = "A", name = "B")]
fn duplicate_name() {}

#[drhook(name = "  ")]
fn empty_name() {}

fn main() {
    unknown_argument();
    name_not_a_string();
    duplicate_name();
    empty_name();
}
