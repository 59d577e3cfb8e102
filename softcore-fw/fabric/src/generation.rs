//! The generation of the binding state: a counter that every bind and
//! unbind advances, so a manager that read the state can make its next
//! change conditional on nobody having changed it since (weft-proto's
//! `if_generation` fields).

/// One value of the binding state's generation counter.
///
/// It starts at 0 when the manager is built (or at the stored value when
/// the bindings are restored from flash) and wraps after `u32::MAX`
/// changes; only equality is meaningful.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Generation(pub u32);

impl Generation {
    /// The generation after one more change.
    #[must_use]
    pub const fn next(self) -> Self {
        Generation(self.0.wrapping_add(1))
    }
}

/// A precondition named a generation that is no longer current.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stale {
    /// The generation the caller expected.
    pub expected: Generation,
    /// The current generation.
    pub current: Generation,
}

/// Checks the precondition `expected` (none: always met) against `current`.
pub fn check(expected: Option<Generation>, current: Generation) -> Result<(), Stale> {
    match expected {
        Some(expected) if expected != current => Err(Stale { expected, current }),
        _ => Ok(()),
    }
}
