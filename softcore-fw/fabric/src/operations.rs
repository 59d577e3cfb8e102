//! Background operations: requests that wait for something outside the
//! manager (a host releasing a slot, new VFs becoming ready) get an ID
//! their caller polls.
//!
//! An operation under way is kept where it waits (an unbind in its slot,
//! [`crate::vswitch::PendingUnbind`]; a NumVFs change beside the manager's
//! SR-IOV state, [`crate::sriov`]); this module hands out the IDs, one
//! space for every kind, and keeps the outcomes of the newest finished
//! ones, so a poll after the end still learns how it ended. An ID is never
//! handed out twice while the manager runs (it wraps after 2^32
//! operations).

use heapless::Deque;

use crate::binding::BindError;
use crate::limits::FINISHED_OPERATIONS;
use crate::sriov::NumVfsError;

/// A background operation's ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct OperationId(pub u32);

/// Why a background operation failed, by its kind: each keeps the typed
/// error of the module that ran it, and the management protocol says it
/// in its own terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationError {
    /// An unbind's table writes or hot-plug interrupt failed as it took effect.
    Unbind(BindError),
    /// A NumVFs change's new VFs did not answer, or could not join the inventory.
    NumVfs(NumVfsError),
}

/// How a background operation ended.
pub type Outcome = Result<(), OperationError>;

/// Where an operation stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationState {
    /// Still waiting.
    Running,
    /// Finished: it took effect, or failed while it did.
    Finished(Outcome),
}

/// The IDs handed out and the outcomes of the newest finished operations.
#[derive(Clone, Debug)]
pub struct Operations {
    next: u32,
    finished: Deque<(OperationId, Outcome), FINISHED_OPERATIONS>,
}

impl Operations {
    /// No operation yet; the first ID is 1.
    pub const fn new() -> Self {
        Operations {
            next: 1,
            finished: Deque::new(),
        }
    }

    /// A new operation's ID.
    pub fn start(&mut self) -> OperationId {
        let id = OperationId(self.next);
        self.next = self.next.wrapping_add(1).max(1);
        id
    }

    /// Records how `op` ended, forgetting the oldest outcome if full.
    pub fn finish(&mut self, op: OperationId, outcome: Outcome) {
        if self.finished.is_full() {
            self.finished.pop_front();
        }
        // Room was made above.
        let _ = self.finished.push_back((op, outcome));
    }

    /// How `op` ended, if it did and is still remembered.
    pub fn outcome(&self, op: OperationId) -> Option<Outcome> {
        self.finished
            .iter()
            .find(|(id, _)| *id == op)
            .map(|(_, outcome)| *outcome)
    }
}

impl Default for Operations {
    fn default() -> Self {
        Self::new()
    }
}
