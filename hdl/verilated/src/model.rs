//! A built design loaded into the process: its ports read and written in
//! place, and its logic evaluated.

use std::collections::HashMap;
use std::ffi::c_void;
use std::fmt;

use crate::{Built, PortDecl, Storage};

/// `void* weft_verilated_new()`.
type NewFn = unsafe extern "C" fn() -> *mut c_void;
/// `void weft_verilated_delete(void*)` and `void weft_verilated_eval(void*)`.
type HandleFn = unsafe extern "C" fn(*mut c_void);
/// `void* weft_verilated_port(void*, uint32_t)`.
type PortFn = unsafe extern "C" fn(*mut c_void, u32) -> *mut c_void;

/// Why a built design could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The library did not load, or lacks the shim's functions.
    Library(libloading::Error),
    /// The shim has no storage for a port the build listed.
    MissingPort(String),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Library(error) => write!(f, "loading the Verilated model: {error}"),
            LoadError::MissingPort(name) => {
                write!(f, "the Verilated model has no storage for port `{name}`")
            }
        }
    }
}

impl std::error::Error for LoadError {}

/// A handle on one top-level port, from [`Model::port`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Port(usize);

/// One port's storage in the model.
struct Slot {
    decl: PortDecl,
    address: *mut u8,
}

/// One instance of a Verilated design.
///
/// Inputs are written in place and take effect at the next
/// [`Model::eval`], which also updates the outputs: set the inputs, eval
/// (the logic settles), read the outputs; raise the clock input and eval
/// for a rising edge.
pub struct Model {
    handle: *mut c_void,
    eval: HandleFn,
    delete: HandleFn,
    slots: Vec<Slot>,
    by_name: HashMap<String, usize>,
    // Declared last: dropped after the functions above are no longer used.
    _library: libloading::Library,
}

impl Model {
    /// Loads `built` and makes one instance of its design, every input 0.
    pub fn load(built: &Built) -> Result<Self, LoadError> {
        // SAFETY: the library is one `crate::build` made: Verilator's
        // model and the generated shim, whose initializers only set up
        // Verilator's own globals.
        let library =
            unsafe { libloading::Library::new(&built.library) }.map_err(LoadError::Library)?;
        // SAFETY: the shim defines these symbols with exactly these
        // signatures (`build::shim_source`).
        let (new, eval, delete, port) = unsafe {
            (
                *library
                    .get::<NewFn>(b"weft_verilated_new\0")
                    .map_err(LoadError::Library)?,
                *library
                    .get::<HandleFn>(b"weft_verilated_eval\0")
                    .map_err(LoadError::Library)?,
                *library
                    .get::<HandleFn>(b"weft_verilated_delete\0")
                    .map_err(LoadError::Library)?,
                *library
                    .get::<PortFn>(b"weft_verilated_port\0")
                    .map_err(LoadError::Library)?,
            )
        };
        // SAFETY: `new` allocates a model and returns its handle.
        let handle = unsafe { new() };
        let mut slots = Vec::with_capacity(built.ports.len());
        for (index, decl) in built.ports.iter().enumerate() {
            // SAFETY: `handle` is live; the shim returns the address of the
            // port's member in the model, or null past its last port.
            let address = unsafe { port(handle, index as u32) }.cast::<u8>();
            if address.is_null() {
                // SAFETY: `handle` came from `new` and is not used again.
                unsafe { delete(handle) };
                return Err(LoadError::MissingPort(decl.name.clone()));
            }
            slots.push(Slot {
                decl: decl.clone(),
                address,
            });
        }
        let by_name = slots
            .iter()
            .enumerate()
            .map(|(index, slot)| (slot.decl.name.clone(), index))
            .collect();
        Ok(Model {
            handle,
            eval,
            delete,
            slots,
            by_name,
            _library: library,
        })
    }

    /// The port named `name` in the Verilog (`ingress$0$valid`).
    pub fn port(&self, name: &str) -> Option<Port> {
        self.by_name.get(name).copied().map(Port)
    }

    /// The declaration of `port`.
    pub fn decl(&self, port: Port) -> &PortDecl {
        &self.slots[port.0].decl
    }

    /// Evaluates the design: its logic settles on the inputs, and any
    /// clock input that rose since the last evaluation clocks its flops.
    pub fn eval(&mut self) {
        // SAFETY: `handle` is live until drop.
        unsafe { (self.eval)(self.handle) }
    }

    /// Writes `value` (bits above the port's width dropped) to a port of
    /// up to 64 bits. A wider port gets its low 64 bits, the rest 0.
    pub fn set(&mut self, port: Port, value: u64) {
        let slot = &self.slots[port.0];
        let value = value & mask(slot.decl.bits);
        // SAFETY: the address is the port's member, of the type its
        // storage names; the model is not being evaluated (`&mut self`).
        unsafe {
            match slot.decl.storage {
                Storage::Byte => slot.address.write(value as u8),
                Storage::Half => slot.address.cast::<u16>().write_unaligned(value as u16),
                Storage::Word => slot.address.cast::<u32>().write_unaligned(value as u32),
                Storage::Double => slot.address.cast::<u64>().write_unaligned(value),
                Storage::Words(words) => {
                    let base = slot.address.cast::<u32>();
                    for word in 0..words {
                        let part = if word < 2 {
                            (value >> (32 * word)) as u32
                        } else {
                            0
                        };
                        base.add(word).write_unaligned(part);
                    }
                }
            }
        }
    }

    /// The value of a port of up to 64 bits (a wider port's low 64 bits).
    pub fn get(&self, port: Port) -> u64 {
        let slot = &self.slots[port.0];
        // SAFETY: as in `set`, reading.
        unsafe {
            match slot.decl.storage {
                Storage::Byte => u64::from(slot.address.read()),
                Storage::Half => u64::from(slot.address.cast::<u16>().read_unaligned()),
                Storage::Word => u64::from(slot.address.cast::<u32>().read_unaligned()),
                Storage::Double => slot.address.cast::<u64>().read_unaligned(),
                Storage::Words(_) => {
                    let base = slot.address.cast::<u32>();
                    u64::from(base.read_unaligned()) | u64::from(base.add(1).read_unaligned()) << 32
                }
            }
        }
    }

    /// Writes a port's 32-bit words, least significant first; words past
    /// the port's are ignored, missing ones are 0.
    pub fn set_words(&mut self, port: Port, words: &[u32]) {
        let slot = &self.slots[port.0];
        match slot.decl.storage {
            Storage::Words(count) => {
                let top_bits = slot.decl.bits - 32 * (count as u32 - 1);
                let base = slot.address.cast::<u32>();
                for word in 0..count {
                    let mut value = words.get(word).copied().unwrap_or(0);
                    if word + 1 == count {
                        value &= mask(top_bits) as u32;
                    }
                    // SAFETY: `word` is within the port's `count` words.
                    unsafe { base.add(word).write_unaligned(value) };
                }
            }
            _ => {
                let low = u64::from(words.first().copied().unwrap_or(0));
                let high = u64::from(words.get(1).copied().unwrap_or(0));
                self.set(port, low | high << 32);
            }
        }
    }

    /// Reads a port's 32-bit words, least significant first, into `words`
    /// (as many as it holds; the rest of `words` is left alone).
    pub fn get_words(&self, port: Port, words: &mut [u32]) {
        let slot = &self.slots[port.0];
        match slot.decl.storage {
            Storage::Words(count) => {
                let base = slot.address.cast::<u32>();
                for (word, out) in words.iter_mut().enumerate().take(count) {
                    // SAFETY: `word` is within the port's `count` words.
                    *out = unsafe { base.add(word).read_unaligned() };
                }
            }
            _ => {
                let value = self.get(port);
                for (word, out) in words.iter_mut().enumerate().take(2) {
                    *out = (value >> (32 * word)) as u32;
                }
            }
        }
    }
}

// SAFETY: the model is plain memory Verilator evaluates on the calling
// thread (no `--threads`); `Model` hands it out only through `&self` and
// `&mut self`, so moving it to another thread moves all use with it.
unsafe impl Send for Model {}

impl Drop for Model {
    fn drop(&mut self) {
        // SAFETY: `handle` came from the shim's `new` and is dropped once.
        unsafe { (self.delete)(self.handle) }
    }
}

/// The low `bits` bits set.
fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}
