//! Where a port's egress stream stands between its TLPs: the slot into which a merge point may let a TLP of its own.

use rust_hdl::prelude::*;

/// Tracks whether a port's own egress stream is between TLPs, for a block
/// that lets TLPs of its own in at that point ([`super::ErrorCompletionQueue`],
/// [`super::InjectMerge`]).
///
/// The stream is inside a TLP from the cycle after its first beat is taken
/// until its last beat is taken. A first beat offered to the link and not
/// taken is never taken back (the stream protocol of `crate::stream`): from
/// the next cycle the offer stands. `free` is high when neither holds, so a
/// TLP committed in that cycle goes out before the stream's next one.
#[derive(LogicBlock, Default)]
pub struct TlpBoundary {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// The port's own stream offers a beat.
    pub upstream_valid: Signal<In, Bit>,
    /// The merge point takes it.
    pub upstream_ready: Signal<In, Bit>,
    /// It is a TLP's first beat.
    pub upstream_sop: Signal<In, Bit>,
    /// It is a TLP's last beat.
    pub upstream_eop: Signal<In, Bit>,
    /// The merge point offers a beat to the link.
    pub downstream_valid: Signal<In, Bit>,
    /// The link takes it.
    pub downstream_ready: Signal<In, Bit>,
    /// The merge point's own TLP is committed or under way.
    pub sending: Signal<In, Bit>,
    /// Between the stream's TLPs, no first beat offered: a TLP may be committed.
    pub free: Signal<Out, Bit>,
    mid_tlp: DFF<Bit>,
    offered: DFF<Bit>,
}

impl Logic for TlpBoundary {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, mid_tlp, offered);
        if self.upstream_valid.val() & self.upstream_ready.val() & self.upstream_sop.val() {
            self.mid_tlp.d.next = !self.upstream_eop.val();
        }
        if self.mid_tlp.q.val()
            & self.upstream_valid.val()
            & self.upstream_ready.val()
            & self.upstream_eop.val()
        {
            self.mid_tlp.d.next = false;
        }
        self.offered.d.next = self.downstream_valid.val()
            & !self.downstream_ready.val()
            & !self.sending.val()
            & !self.mid_tlp.q.val();
        self.free.next = !self.mid_tlp.q.val() & !self.offered.q.val();
    }
}
