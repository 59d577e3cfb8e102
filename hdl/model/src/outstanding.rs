//! Non-posted requests a host has in flight, so every one of them is completed.
//!
//! A host's non-posted request enters the fabric under the host's proxy
//! requester ID with a tag the switch allocates, which is the index of its
//! entry here. The entry keeps what the host's completion must carry (its
//! own requester ID and tag), where the request went and when. A completion
//! restores them; a request whose target goes away, or that waits too
//! long, is completed by the switch with an error (DESIGN.md: no host ever
//! waits forever).

use std::collections::BTreeSet;

use weft_pcie::tlp::Tag;
use weft_pcie::Bdf;
use weft_regs::capacity::OUTSTANDING_PER_HOST;

use crate::tables::Destination;

/// One request in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outstanding {
    /// The request's header as the host sent it, to answer it if it never completes.
    pub request: weft_pcie::tlp::Header,
    /// The host-domain requester ID.
    pub requester: Bdf,
    /// The host's tag.
    pub tag: Tag,
    /// Where the request was routed.
    pub target: Destination,
    /// When it entered the switch, in nanoseconds of model time.
    pub issued_ns: u64,
}

/// The table of one host port: indexed by the fabric tag it hands out.
#[derive(Clone, Debug)]
pub struct OutstandingTable {
    entries: Vec<Option<Outstanding>>,
    next: usize,
    /// Every entry in flight as (issue time, index), oldest first, so the
    /// next request to time out is found without visiting every entry.
    by_age: BTreeSet<(u64, usize)>,
}

impl Default for OutstandingTable {
    fn default() -> Self {
        OutstandingTable {
            entries: vec![None; OUTSTANDING_PER_HOST],
            next: 0,
            by_age: BTreeSet::new(),
        }
    }
}

impl OutstandingTable {
    /// Records a request and returns its fabric tag, or `None` when every tag is in use.
    ///
    /// Tags are handed out round-robin, so a tag freed by a timeout is the
    /// last to be reused and a straggling completion for it is unlikely to
    /// match a new request.
    pub fn allocate(&mut self, entry: Outstanding) -> Option<Tag> {
        let capacity = self.entries.len();
        let index = (0..capacity)
            .map(|step| (self.next + step) % capacity)
            .find(|&i| self.entries[i].is_none())?;
        self.entries[index] = Some(entry);
        self.by_age.insert((entry.issued_ns, index));
        self.next = (index + 1) % capacity;
        Tag::new(u16::try_from(index).expect("capacity fits a 10-bit tag"))
    }

    /// Undoes the allocation of `tag`, the last one made: its request is
    /// not sent after all (it routes back to its ingress, or to a port the
    /// switch lacks), so the table is as if it had never been offered, and
    /// the next request gets the same tag, as the RTL table, which
    /// allocates only as a request is sent on, gives it.
    pub fn cancel(&mut self, tag: Tag) {
        let index = usize::from(tag.get());
        if index < self.entries.len() {
            self.take(index);
            self.next = index;
        }
    }

    /// The entry for a fabric tag, if one is in flight.
    pub fn get(&self, tag: Tag) -> Option<&Outstanding> {
        self.entries.get(usize::from(tag.get()))?.as_ref()
    }

    /// Retires the entry for a fabric tag.
    pub fn release(&mut self, tag: Tag) -> Option<Outstanding> {
        let index = usize::from(tag.get());
        self.entries.get(index)?;
        self.take(index)
    }

    /// Empties the entry at `index`, which exists, and returns what it held.
    fn take(&mut self, index: usize) -> Option<Outstanding> {
        let entry = self.entries[index].take()?;
        self.by_age.remove(&(entry.issued_ns, index));
        Some(entry)
    }

    /// Retires and returns every entry that `select` picks, with its fabric tag.
    pub fn release_where(
        &mut self,
        mut select: impl FnMut(&Outstanding) -> bool,
    ) -> Vec<(Tag, Outstanding)> {
        let mut released = Vec::new();
        for index in 0..self.entries.len() {
            if self.entries[index].as_ref().is_some_and(&mut select) {
                let entry = self.take(index).expect("checked just above");
                released.push((
                    Tag::new(index as u16).expect("index is below the tag capacity"),
                    entry,
                ));
            }
        }
        released
    }

    /// Requests in flight.
    pub fn in_flight(&self) -> usize {
        self.by_age.len()
    }

    /// When the oldest request in flight entered the switch, in
    /// nanoseconds of model time: the first of them to time out.
    pub fn oldest_issued_ns(&self) -> Option<u64> {
        self.by_age.first().map(|&(issued_ns, _)| issued_ns)
    }
}
