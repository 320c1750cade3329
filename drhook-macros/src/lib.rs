//! The `#[drhook]` attribute: instruments a function with a Dr.Hook region.
//!
//! ```ignore
//! #[drhook]                        // name: "<module path>::<fn name>"
//! fn step() { ... }
//!
//! #[drhook(name = "PHYS:CLOUDSC")] // explicit name
//! fn cloudsc() { ... }
//! ```
//!
//! The function body is wrapped so that a guard is created first and dropped
//! last: early `return`, `?` and panics all leave the region. The body of an
//! `async fn` becomes a `drhook::Instrumented` future instead: each poll is
//! an activation, one call per call of the function. Each function gets one
//! `static` call-site record, registered with `inventory`.
//!
//! Layout: `args` parses the attribute's arguments, `expand` rewrites the
//! function. On bad input the output is one precise `compile_error!` plus
//! the untouched item, so the rest of the crate still type-checks.

use proc_macro::TokenStream;

mod args;
mod expand;

/// Instruments a function, method, associated function or trait method with
/// a default body. See the crate documentation of `drhook` for the naming
/// rule and options.
#[proc_macro_attribute]
pub fn drhook(args: TokenStream, item: TokenStream) -> TokenStream {
    let item: proc_macro2::TokenStream = item.into();
    let result = args::Args::parse(args.into()).and_then(|a| expand::expand(&a, item.clone()));
    match result {
        Ok(ts) => ts.into(),
        Err(e) => {
            let mut out = e.to_compile_error();
            out.extend(item);
            out.into()
        }
    }
}
