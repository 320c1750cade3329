//! Errors of the libhpm API. They are counted (`hpm_error_count`) and
//! reported as messages; they never stop the program (seed §3.7).

use std::fmt;

/// An error of a libhpm call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HpmError {
    /// A call before `hpmInit` (or after `hpmTerminate`).
    NotInitialized,
    /// `hpmInit` called twice without `hpmTerminate`.
    AlreadyInitialized,
    /// A call after `hpmTerminate` on a session that still exists.
    Terminated,
    /// Section id outside `1..=HPM_NUM_INST_PTS`.
    IdOutOfRange {
        /// The id given.
        id: i32,
        /// The largest valid id.
        max: u32,
    },
    /// The section id belongs to another thread (seed §3.11).
    WrongThread {
        /// The id given.
        id: u32,
    },
    /// Start of a section that is already running.
    AlreadyStarted {
        /// The id given.
        id: u32,
    },
    /// Stop of a section that is not running.
    NotStarted {
        /// The id given.
        id: u32,
    },
    /// An explicit parent that does not exist or is not allowed (seed §3.6.2).
    IllegalParent {
        /// The section being started.
        id: u32,
        /// The parent id given.
        parent: i32,
    },
    /// An output file could not be written.
    Output {
        /// The path.
        path: String,
        /// The OS error.
        message: String,
    },
    /// A bug caught at the API boundary (a panic); the program goes on.
    Internal(String),
}

impl fmt::Display for HpmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HpmError::NotInitialized => write!(
                f,
                "hpmInit has not been called (or hpmTerminate was already called)"
            ),
            HpmError::AlreadyInitialized => write!(f, "hpmInit called twice without hpmTerminate"),
            HpmError::Terminated => write!(f, "hpmTerminate was already called"),
            HpmError::IdOutOfRange { id, max } => write!(
                f,
                "Instance ID {id} out of range: it must be > 0 and <= {max} (set HPM_NUM_INST_PTS for more)"
            ),
            HpmError::WrongThread { id } => write!(f, "Instance ID on wrong thread (id {id})"),
            HpmError::AlreadyStarted { id } => {
                write!(f, "Instance ID {id} started twice without a stop")
            }
            HpmError::NotStarted { id } => write!(f, "Instance ID {id} stopped but not started"),
            HpmError::IllegalParent { id, parent } => {
                write!(
                    f,
                    "Illegal instance id specified (parent {parent} of section {id})"
                )
            }
            HpmError::Output { path, message } => {
                write!(f, "cannot write output file '{path}': {message}")
            }
            HpmError::Internal(m) => write!(f, "internal error: {m}"),
        }
    }
}

impl std::error::Error for HpmError {}
