//! Configuring Dr.Hook from code instead of (or on top of) the environment.
//!
//! The engine reads its configuration once, at the first instrumented call
//! (or the first [`crate::is_enabled`]). An application that does not want
//! to rely on environment variables calls [`Settings::init`] before that:
//!
//! ```no_run
//! drhook::Settings::new()
//!     .enabled(true)
//!     .options("prof")
//!     .profile("myprof.%d")
//!     .init()
//!     .expect("called before the first instrumented call");
//! ```
//!
//! Values given here take precedence over the environment; every variable
//! not given is read from the environment as usual, unless
//! [`Settings::ignore_environment`] is used. The values are parsed exactly
//! like the variables of the same name (see the README), with the same
//! warnings for malformed ones.

use std::collections::HashMap;

use crate::config::env;

/// Dr.Hook's configuration as variable assignments (see the module
/// documentation).
#[derive(Clone, Debug, Default)]
pub struct Settings {
    vars: HashMap<String, String>,
    ignore_environment: bool,
}

/// [`Settings::init`] was called after the engine had read its
/// configuration: nothing was changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlreadyInitialized;

impl std::fmt::Display for AlreadyInitialized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "Dr.Hook was already initialised (an instrumented call or is_enabled() came first); the settings were not applied",
        )
    }
}

impl std::error::Error for AlreadyInitialized {}

impl Settings {
    /// No assignments: the environment decides everything.
    pub fn new() -> Self {
        Self::default()
    }

    /// `DR_HOOK`: switches Dr.Hook on or off.
    pub fn enabled(self, on: bool) -> Self {
        self.var(env::DR_HOOK, if on { "1" } else { "0" })
    }

    /// `DR_HOOK_OPT`: e.g. `"prof"`, `"cpuprof"`, `"hpmprof,callpath"`.
    pub fn options(self, options: &str) -> Self {
        self.var(env::DR_HOOK_OPT, options)
    }

    /// `DR_HOOK_PROFILE`: the profile file template (`%d` = MPI task).
    pub fn profile(self, template: &str) -> Self {
        self.var(env::DR_HOOK_PROFILE, template)
    }

    /// `DR_HOOK_TRAPFPE`: floating-point traps (invalid, division by
    /// zero, overflow: SIGFPE and a traceback) on the threads Dr.Hook sets
    /// up. Off by default from Rust, which relies on IEEE results.
    pub fn trap_fpe(self, on: bool) -> Self {
        self.var(env::DR_HOOK_TRAPFPE, if on { "1" } else { "0" })
    }

    /// Any Dr.Hook variable (names in [`crate::env`]).
    pub fn var(mut self, name: &str, value: &str) -> Self {
        self.vars.insert(name.to_string(), value.to_string());
        self
    }

    /// Do not read the environment at all: variables not given here take
    /// their defaults (Dr.Hook is then off unless [`Settings::enabled`]).
    pub fn ignore_environment(mut self) -> Self {
        self.ignore_environment = true;
        self
    }

    /// The value of variable `name` under these settings.
    pub fn lookup(&self, name: &str) -> Option<String> {
        match self.vars.get(name) {
            Some(v) => Some(v.clone()),
            None if self.ignore_environment => None,
            None => env::process_env(name),
        }
    }

    /// Initialises the engine with these settings. Fails, changing nothing,
    /// if the engine has already read its configuration.
    pub fn init(self) -> Result<(), AlreadyInitialized> {
        let raw = |name: &str| match self.vars.get(name) {
            Some(v) => Some(v.into()),
            None if self.ignore_environment => None,
            None => env::process_env_os(name),
        };
        if crate::runtime::init_with(&raw) {
            Ok(())
        } else {
            Err(AlreadyInitialized)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_values_win_and_the_rest_comes_from_the_environment() {
        let s = Settings::new().enabled(true).options("prof");
        assert_eq!(s.lookup(env::DR_HOOK).as_deref(), Some("1"));
        assert_eq!(s.lookup(env::DR_HOOK_OPT).as_deref(), Some("prof"));
        // PATH is set in any test environment.
        assert!(s.lookup("PATH").is_some());
        let s = s.ignore_environment();
        assert!(s.lookup("PATH").is_none());
        assert_eq!(s.lookup(env::DR_HOOK).as_deref(), Some("1"));
    }
}
