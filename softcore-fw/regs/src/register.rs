//! How a register map is described: blocks of registers, registers of fields.
//!
//! A [`RegisterBlock`] is a run of identical register sets in the address
//! space: `instances` copies (one per port, say) `stride` bytes apart, each
//! holding `entries` copies (one per table entry) `entry_stride` bytes
//! apart, each of which holds the block's [`Register`]s at their offsets.
//! A block that is not an array has one instance of one entry. Every
//! register carries its block's [`Layout`], so its address is one `const`
//! call: `window::BASE_LOW.address(port, entry)`.
//!
//! All registers are 32 bits wide and aligned on 4 bytes.

/// What software may do with a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read only; writes are ignored (RO).
    ReadOnly,
    /// Read and write; reads return what was written to the defined fields, reserved bits read 0 (RW).
    ReadWrite,
    /// Read; writing a 1 to a bit clears it, writing a 0 leaves it (RW1C).
    WriteOneToClear,
    /// Write only; reads return 0 (WO).
    WriteOnly,
}

impl Access {
    /// The customary abbreviation: RO, RW, RW1C or WO.
    pub const fn abbreviation(self) -> &'static str {
        match self {
            Access::ReadOnly => "RO",
            Access::ReadWrite => "RW",
            Access::WriteOneToClear => "RW1C",
            Access::WriteOnly => "WO",
        }
    }
}

/// A run of bits inside a register with one meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Name, in upper case.
    pub name: &'static str,
    /// Position of the least significant bit.
    pub lsb: u32,
    /// Number of bits (at least 1).
    pub width: u32,
    /// What the field means.
    pub doc: &'static str,
}

impl Field {
    /// A field of `width` bits from bit `lsb` up.
    pub const fn new(name: &'static str, lsb: u32, width: u32, doc: &'static str) -> Field {
        Field {
            name,
            lsb,
            width,
            doc,
        }
    }

    /// Position of the most significant bit.
    pub const fn msb(&self) -> u32 {
        self.lsb + self.width - 1
    }

    /// The field's bits within its register.
    pub const fn mask(&self) -> u32 {
        let ones = if self.width >= 32 {
            u32::MAX
        } else {
            (1 << self.width) - 1
        };
        ones << self.lsb
    }

    /// `value` placed into the field's bits (bits of `value` beyond the field's width are dropped).
    pub const fn encode(&self, value: u32) -> u32 {
        (value << self.lsb) & self.mask()
    }

    /// The field's value in `register`.
    pub const fn decode(&self, register: u32) -> u32 {
        (register & self.mask()) >> self.lsb
    }
}

/// Where a block's register sets sit: a base, instances and entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Address of instance 0, entry 0.
    pub base: u32,
    /// Number of instances (ports, say); 1 for a block that is not an array.
    pub instances: u32,
    /// Bytes from one instance to the next.
    pub stride: u32,
    /// Entries per instance (table entries, say); 1 for a block without entries.
    pub entries: u32,
    /// Bytes from one entry to the next, a power of two.
    pub entry_stride: u32,
}

impl Layout {
    /// A register of a block with this layout, at byte `offset` in each entry.
    pub const fn register(
        self,
        name: &'static str,
        offset: u32,
        access: Access,
        doc: &'static str,
        fields: &'static [Field],
    ) -> Register {
        Register {
            name,
            offset,
            access,
            doc,
            fields,
            layout: self,
        }
    }

    /// Address of entry `entry` of instance `instance`.
    ///
    /// # Panics
    ///
    /// If either index is out of range (at compile time in a `const`).
    pub const fn entry_address(&self, instance: u32, entry: u32) -> u32 {
        assert!(instance < self.instances, "instance index out of range");
        assert!(entry < self.entries, "entry index out of range");
        self.base + instance * self.stride + entry * self.entry_stride
    }

    /// Address of instance `instance`'s entry 0: where its table starts.
    pub const fn instance_base(&self, instance: u32) -> u32 {
        self.entry_address(instance, 0)
    }

    /// Bytes one instance's entries occupy.
    pub const fn instance_span(&self) -> u32 {
        self.entries * self.entry_stride
    }

    /// Bytes the whole block occupies, from its base to the end of its last instance.
    pub const fn span(&self) -> u32 {
        (self.instances - 1) * self.stride + self.instance_span()
    }
}

/// One 32-bit register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Register {
    /// Name, in upper case.
    pub name: &'static str,
    /// Byte offset within its entry.
    pub offset: u32,
    /// What software may do with it.
    pub access: Access,
    /// What it is for.
    pub doc: &'static str,
    /// Its fields; bits outside every field are reserved, read 0 and are ignored on writes.
    pub fields: &'static [Field],
    /// Where the block it belongs to sits.
    pub layout: Layout,
}

impl Register {
    /// The register's address in instance `instance`, entry `entry`.
    ///
    /// # Panics
    ///
    /// If either index is out of range (at compile time in a `const`).
    pub const fn address(&self, instance: u32, entry: u32) -> u32 {
        self.layout.entry_address(instance, entry) + self.offset
    }

    /// The register's index in 32-bit words within its entry, as a decoder compares it.
    pub const fn word(&self) -> u32 {
        self.offset / 4
    }

    /// Every bit some field defines.
    pub const fn mask(&self) -> u32 {
        let mut mask = 0;
        let mut i = 0;
        while i < self.fields.len() {
            mask |= self.fields[i].mask();
            i += 1;
        }
        mask
    }
}

/// Names of a block's entries, for blocks whose entries are distinct things
/// (counters) rather than interchangeable table slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryName {
    /// Name, in upper case.
    pub name: &'static str,
    /// What the entry holds.
    pub doc: &'static str,
}

/// A named group of registers, possibly repeated per instance and per entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterBlock {
    /// Name, in lower case, as its Rust module is named.
    pub name: &'static str,
    /// What the block is for.
    pub doc: &'static str,
    /// Where its register sets sit.
    pub layout: Layout,
    /// The registers of one entry, by offset.
    pub registers: &'static [Register],
    /// Names of the entries, in entry order, or empty when entries are numbered slots.
    pub entry_names: &'static [EntryName],
}

impl RegisterBlock {
    /// One past the block's last byte.
    pub const fn end(&self) -> u32 {
        self.layout.base + self.layout.span()
    }
}
