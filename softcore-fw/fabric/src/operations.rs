//! The management requests that span more than one request: a reset,
//! armed and then triggered with the token the arm returned, and a NumVFs
//! change that runs in the background under an operation ID.
//!
//! A reset is two-phase, as weft-proto asks of actions that must not run
//! twice by accident: `ResetArm` returns a token valid for
//! [`RESET_TOKEN_LIFETIME_MS`], and only a `ResetTrigger` presenting it
//! resets. A trigger resent byte for byte is answered from the reply
//! cache without running again; any other trigger (an old token, a token
//! already used, a token from before a restart) is refused, so no retry
//! resets twice. Arming again replaces the token.
//!
//! One NumVFs change waits at a time ([`crate::sriov`]): its operation ID
//! is answered in progress, and `OperationStatus` polls it. The outcome
//! of the last finished operation is kept for the polls after it.

use weft_proto::{Error, ResetScope};

use crate::sriov::PendingVfs;

/// How long a reset token stays valid after `ResetArm`: long enough for a
/// client to send the trigger across a slow link with retries, short
/// enough that a forgotten arm does not linger.
pub const RESET_TOKEN_LIFETIME_MS: u32 = 10_000;

/// A reset armed and waiting for its trigger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ArmedReset {
    token: u32,
    scope: ResetScope,
    expires_at_ns: u64,
}

/// Why a reset trigger was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerError {
    /// No reset is armed, or the token is not the one the arm returned.
    BadToken,
    /// The token was the armed one, but it expired; arm again.
    Expired,
}

/// The state of the multi-request management operations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operations {
    reset: Option<ArmedReset>,
    /// Resets armed so far, mixed into each token.
    arms: u32,
    /// The ID of the NumVFs change waiting or last started.
    current_op: u32,
    /// The change waiting for its VFs.
    pub(crate) pending_vfs: Option<PendingVfs>,
    /// How the last finished operation ended.
    finished: Option<(u32, Result<(), Error>)>,
}

impl Operations {
    /// Nothing armed, nothing running.
    pub const NEW: Operations = Operations {
        reset: None,
        arms: 0,
        current_op: 0,
        pending_vfs: None,
        finished: None,
    };

    /// Arms a reset of `scope` at `now_ns`; returns its token. Each token
    /// differs from the ones before it (the arm count is mixed in) and
    /// from one a restarted switch hands out (the time is).
    pub fn arm_reset(&mut self, scope: ResetScope, now_ns: u64) -> u32 {
        self.arms = self.arms.wrapping_add(1);
        let mixed = (now_ns ^ u64::from(self.arms) << 40).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let token = (mixed >> 32) as u32 ^ self.arms;
        self.reset = Some(ArmedReset {
            token,
            scope,
            expires_at_ns: now_ns.saturating_add(u64::from(RESET_TOKEN_LIFETIME_MS) * 1_000_000),
        });
        token
    }

    /// The scope to reset if `token` is the armed one and has not expired
    /// at `now_ns`; the arm is used up either way once the token matched.
    pub fn trigger_reset(&mut self, token: u32, now_ns: u64) -> Result<ResetScope, TriggerError> {
        match self.reset {
            Some(armed) if armed.token == token => {
                self.reset = None;
                if now_ns > armed.expires_at_ns {
                    Err(TriggerError::Expired)
                } else {
                    Ok(armed.scope)
                }
            }
            _ => Err(TriggerError::BadToken),
        }
    }

    /// A new operation ID for a change that starts now.
    pub(crate) fn start_operation(&mut self) -> u32 {
        self.current_op = self.current_op.wrapping_add(1).max(1);
        self.current_op
    }

    /// The ID of the change waiting, if one is.
    pub fn running(&self) -> Option<u32> {
        self.pending_vfs.as_ref().map(|_| self.current_op)
    }

    /// Records how operation `op` ended.
    pub(crate) fn finish(&mut self, op: u32, outcome: Result<(), Error>) {
        self.finished = Some((op, outcome));
    }

    /// How operation `op` ended, if it is the last one that did.
    pub fn outcome(&self, op: u32) -> Option<&Result<(), Error>> {
        self.finished
            .as_ref()
            .filter(|(finished, _)| *finished == op)
            .map(|(_, outcome)| outcome)
    }
}

impl Default for Operations {
    fn default() -> Self {
        Operations::NEW
    }
}
