//! The two phases of a management reset: armed, then triggered with the
//! token the arm returned.
//!
//! A reset is two-phase, as weft-proto asks of actions that must not run
//! twice by accident: `ResetArm` returns a token valid for
//! [`RESET_TOKEN_LIFETIME_MS`], and only a `ResetTrigger` presenting it
//! resets. A trigger resent byte for byte is answered from the reply
//! cache without running again; any other trigger (an old token, a token
//! already used, a token from before a restart) is refused, so no retry
//! resets twice. Arming again replaces the token.

use weft_proto::ResetScope;

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

/// The armed reset, if any, and the count of arms mixed into each token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResetArming {
    armed: Option<ArmedReset>,
    /// Resets armed so far, mixed into each token.
    arms: u32,
}

impl ResetArming {
    /// Nothing armed.
    pub const NEW: ResetArming = ResetArming {
        armed: None,
        arms: 0,
    };

    /// Arms a reset of `scope` at `now_ns`; returns its token. Each token
    /// differs from the ones before it (the arm count is mixed in) and
    /// from one a restarted switch hands out (the time is).
    pub fn arm(&mut self, scope: ResetScope, now_ns: u64) -> u32 {
        self.arms = self.arms.wrapping_add(1);
        let mixed = (now_ns ^ u64::from(self.arms) << 40).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let token = (mixed >> 32) as u32 ^ self.arms;
        self.armed = Some(ArmedReset {
            token,
            scope,
            expires_at_ns: now_ns.saturating_add(u64::from(RESET_TOKEN_LIFETIME_MS) * 1_000_000),
        });
        token
    }

    /// The scope to reset if `token` is the armed one and has not expired
    /// at `now_ns`; the arm is used up either way once the token matched.
    pub fn trigger(&mut self, token: u32, now_ns: u64) -> Result<ResetScope, TriggerError> {
        match self.armed {
            Some(armed) if armed.token == token => {
                self.armed = None;
                if now_ns > armed.expires_at_ns {
                    Err(TriggerError::Expired)
                } else {
                    Ok(armed.scope)
                }
            }
            _ => Err(TriggerError::BadToken),
        }
    }
}

impl Default for ResetArming {
    fn default() -> Self {
        ResetArming::NEW
    }
}
