//! The console UART (`weft_regs::soc::uart`): transmit and receive FIFOs
//! between the register interface and a byte stream on each side.

use rust_hdl::prelude::*;
use weft_regs::soc::uart;

const _: () = assert!(uart::TX_READY.lsb == 0 && uart::RX_VALID.lsb == 1);

use crate::csr::CsrTarget;

/// 16 bytes ([`uart::TX_FIFO_BYTES`]): 4 address bits, a 5-bit fill pointer.
type ByteFifo = SynchronousFIFO<Bits<8>, 4, 5, 1>;
const _: () = assert!(uart::TX_FIFO_BYTES == 1 << 4);

/// The UART's registers over 16-byte transmit and receive FIFOs.
///
/// The outside sees bytes, not a serial line: `tx_data` is valid while
/// `tx_valid` and leaves at an edge with `tx_ready`; a byte on `rx_data`
/// with `rx_valid` enters at an edge with `rx_ready` (the receive FIFO has
/// room). A board puts its serial framing behind these. A write to
/// `TX_DATA` while the transmit FIFO is full is dropped, as the register
/// map says. The FIFOs have no reset: bytes queued before a watchdog reset
/// still go out, so the console keeps the last words of a hung firmware.
#[derive(LogicBlock)]
pub struct Uart {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// The register interface (word offsets within the block).
    pub bus: CsrTarget,
    /// The oldest byte not yet sent.
    pub tx_data: Signal<Out, Bits<8>>,
    /// `tx_data` holds a byte.
    pub tx_valid: Signal<Out, Bit>,
    /// The outside takes `tx_data` at this edge.
    pub tx_ready: Signal<In, Bit>,
    /// A received byte.
    pub rx_data: Signal<In, Bits<8>>,
    /// `rx_data` holds a byte.
    pub rx_valid: Signal<In, Bit>,
    /// The receive FIFO takes `rx_data` at this edge.
    pub rx_ready: Signal<Out, Bit>,
    tx_fifo: ByteFifo,
    rx_fifo: ByteFifo,
    read_data: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
    word: Signal<Local, Bits<6>>,
    tx_data_word: Constant<Bits<6>>,
    status_word: Constant<Bits<6>>,
    rx_data_word: Constant<Bits<6>>,
}

impl Uart {
    /// A UART with empty FIFOs.
    pub fn new() -> Self {
        Self {
            tx_data_word: Constant::new(bits(u64::from(uart::TX_DATA.word()))),
            status_word: Constant::new(bits(u64::from(uart::STATUS.word()))),
            rx_data_word: Constant::new(bits(u64::from(uart::RX_DATA.word()))),
            clock: Default::default(),
            bus: Default::default(),
            tx_data: Default::default(),
            tx_valid: Default::default(),
            tx_ready: Default::default(),
            rx_data: Default::default(),
            rx_valid: Default::default(),
            rx_ready: Default::default(),
            tx_fifo: Default::default(),
            rx_fifo: Default::default(),
            read_data: Default::default(),
            read_valid: Default::default(),
            word: Default::default(),
        }
    }
}

impl Default for Uart {
    fn default() -> Self {
        Self::new()
    }
}

impl Logic for Uart {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, tx_fifo, rx_fifo);
        dff_setup!(self, clock, read_data, read_valid);
        self.word.next = self.bus.address.val().get_bits::<6>(2);
        // Transmit: register writes in, the byte stream out.
        self.tx_fifo.data_in.next = self.bus.write_data.val().get_bits::<8>(0);
        self.tx_fifo.write.next = self.bus.write.val()
            && self.word.val() == self.tx_data_word.val()
            && !self.tx_fifo.full.val();
        self.tx_data.next = self.tx_fifo.data_out.val();
        self.tx_valid.next = !self.tx_fifo.empty.val();
        self.tx_fifo.read.next = self.tx_ready.val() && !self.tx_fifo.empty.val();
        // Receive: the byte stream in, register reads out.
        self.rx_fifo.data_in.next = self.rx_data.val();
        self.rx_ready.next = !self.rx_fifo.full.val();
        self.rx_fifo.write.next = self.rx_valid.val() && !self.rx_fifo.full.val();
        self.rx_fifo.read.next = self.bus.read.val()
            && self.word.val() == self.rx_data_word.val()
            && !self.rx_fifo.empty.val();
        // Reads answer in the next cycle and drive zero otherwise.
        self.read_valid.d.next = self.bus.read.val();
        self.read_data.d.next = 0.into();
        if self.bus.read.val() && self.word.val() == self.status_word.val() {
            // Each flag inverted by XOR, not `!`: Verilog widens `~flag` to
            // 32 bits before inverting it, which would set every bit.
            self.read_data.d.next = (bit_cast::<32, 1>(self.tx_fifo.full.val().into())
                | (bit_cast::<32, 1>(self.rx_fifo.empty.val().into()) << 1))
                ^ bits::<32>(0b11);
        }
        if self.bus.read.val()
            && self.word.val() == self.rx_data_word.val()
            && !self.rx_fifo.empty.val()
        {
            self.read_data.d.next = bit_cast::<32, 8>(self.rx_fifo.data_out.val());
        }
        self.bus.read_data.next = self.read_data.q.val();
        self.bus.read_valid.next = self.read_valid.q.val();
    }
}
