//! The front doors of Rust code: RAII guards (`#[drhook]`, `scope!`),
//! instrumented futures (`#[drhook]` on `async fn`), configuration from code
//! (`Settings`), the `tracing` Layer with its span table, and the
//! allocation events of the memory profile (`Alloc`).

pub(crate) mod alloc;
pub(crate) mod guard;
pub mod instrumented;
#[cfg(feature = "tracing")]
pub(crate) mod layer;
pub(crate) mod settings;
#[cfg(feature = "tracing")]
pub(crate) mod span_table;
