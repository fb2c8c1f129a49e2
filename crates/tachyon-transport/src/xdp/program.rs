//! The XDP program, written as eBPF instructions here (no C compiler, no object file, no
//! loader library: a user gets it with the crate). It redirects to the AF_XDP socket of the
//! receiving queue only what the transport owns, and passes everything else to the kernel:
//!
//! Ethernet (one optional 802.1Q tag) → IPv4 without options, not a fragment → UDP to one
//! of the transport's ports → a payload that starts with `RTPS` (the transport's magic; the
//! raw floor takes any).
//!
//! `bpf_redirect_map(&xsks, rx_queue_index, XDP_PASS)` falls back to the kernel when no
//! socket is bound to the queue, so a crashed process leaves the interface working (and its
//! link, held by a file descriptor, detaches the program when the process dies). IP
//! fragments go to the kernel too: it reassembles them for the transport's UDP socket on the
//! same port (other vendors send datagrams larger than the MTU; Tachyon's own fit it).

/// One eBPF instruction (`struct bpf_insn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    code: u8,
    regs: u8,
    off: i16,
    imm: i32,
}

impl Insn {
    /// Its 8 bytes, as the kernel reads them.
    pub fn to_bytes(self) -> [u8; 8] {
        let o = self.off.to_le_bytes();
        let i = self.imm.to_le_bytes();
        [self.code, self.regs, o[0], o[1], i[0], i[1], i[2], i[3]]
    }
}

const XDP_PASS: i32 = 2;
const HELPER_REDIRECT_MAP: i32 = 51;
const PSEUDO_MAP_FD: u8 = 1;

// Registers.
const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R3: u8 = 3;
const R5: u8 = 5;
const R6: u8 = 6;
const R9: u8 = 9;

/// A tiny assembler with forward labels.
#[derive(Default)]
struct Asm {
    insns: Vec<Insn>,
    /// (instruction index, label) of jumps to patch.
    fixups: Vec<(usize, usize)>,
    labels: Vec<Option<usize>>,
}

impl Asm {
    fn op(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) {
        self.insns.push(Insn {
            code,
            regs: (src << 4) | dst,
            off,
            imm,
        });
    }
    fn label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }
    fn bind(&mut self, label: usize) {
        self.labels[label] = Some(self.insns.len());
    }
    fn jump(&mut self, code: u8, dst: u8, src: u8, imm: i32, label: usize) {
        self.fixups.push((self.insns.len(), label));
        self.op(code, dst, src, 0, imm);
    }
    /// `dst = *(u32 *)(src + off)`
    fn ldxw(&mut self, dst: u8, src: u8, off: i16) {
        self.op(0x61, dst, src, off, 0);
    }
    /// `dst = *(u16 *)(src + off)` (the wire's big-endian bytes, read little-endian)
    fn ldxh(&mut self, dst: u8, src: u8, off: i16) {
        self.op(0x69, dst, src, off, 0);
    }
    /// `dst = *(u8 *)(src + off)`
    fn ldxb(&mut self, dst: u8, src: u8, off: i16) {
        self.op(0x71, dst, src, off, 0);
    }
    fn mov_imm(&mut self, dst: u8, imm: i32) {
        self.op(0xb7, dst, 0, 0, imm);
    }
    fn mov_reg(&mut self, dst: u8, src: u8) {
        self.op(0xbf, dst, src, 0, 0);
    }
    fn add_imm(&mut self, dst: u8, imm: i32) {
        self.op(0x07, dst, 0, 0, imm);
    }
    fn and_imm(&mut self, dst: u8, imm: i32) {
        self.op(0x57, dst, 0, 0, imm);
    }
    fn jgt_reg(&mut self, dst: u8, src: u8, label: usize) {
        self.jump(0x2d, dst, src, 0, label);
    }
    fn jeq_imm(&mut self, dst: u8, imm: i32, label: usize) {
        self.jump(0x15, dst, 0, imm, label);
    }
    fn jne_imm(&mut self, dst: u8, imm: i32, label: usize) {
        self.jump(0x55, dst, 0, imm, label);
    }
    fn ja(&mut self, label: usize) {
        self.jump(0x05, 0, 0, 0, label);
    }
    fn ld_map_fd(&mut self, dst: u8, fd: i32) {
        self.op(0x18, dst, PSEUDO_MAP_FD, 0, fd);
        self.op(0, 0, 0, 0, 0);
    }
    fn call(&mut self, helper: i32) {
        self.op(0x85, 0, 0, 0, helper);
    }
    fn exit(&mut self) {
        self.op(0x95, 0, 0, 0, 0);
    }
    /// `if data + len > data_end goto label` (data in R2, data_end in R3; R5 scratch).
    fn need(&mut self, len: i32, label: usize) {
        self.mov_reg(R5, R2);
        self.add_imm(R5, len);
        self.jgt_reg(R5, R3, label);
    }
    fn finish(mut self) -> Vec<Insn> {
        for &(at, label) in &self.fixups {
            let target = self.labels[label].expect("every label bound");
            self.insns[at].off = (target as isize - at as isize - 1) as i16;
        }
        self.insns
    }
}

/// A 16-bit port as a little-endian load of its big-endian wire bytes reads it.
fn wire16(v: u16) -> i32 {
    i32::from(v.swap_bytes())
}

/// The program for `ports` (at most [`MAX_PORTS`]), redirecting into the XSKMAP whose file
/// descriptor is `xsks` the datagrams whose payload starts with `magic` (any payload of at
/// least four octets without).
pub fn build(xsks: i32, ports: &[u16], magic: Option<[u8; 4]>) -> Vec<Insn> {
    let mut a = Asm::default();
    let pass = a.label();
    let no_vlan = a.label();
    let port_ok = a.label();
    // struct xdp_md: data, data_end, data_meta, ingress_ifindex, rx_queue_index.
    a.ldxw(R2, R1, 0);
    a.ldxw(R3, R1, 4);
    a.ldxw(R9, R1, 16);
    a.need(14, pass);
    a.ldxh(R6, R2, 12);
    a.jne_imm(R6, wire16(0x8100), no_vlan);
    a.add_imm(R2, 4);
    a.need(14, pass);
    a.ldxh(R6, R2, 12);
    a.bind(no_vlan);
    a.jne_imm(R6, wire16(0x0800), pass);
    // Ethernet 14 + IPv4 20 + UDP 8 + "RTPS" 4.
    a.need(46, pass);
    a.ldxb(R6, R2, 14);
    a.jne_imm(R6, 0x45, pass);
    a.ldxb(R6, R2, 23);
    a.jne_imm(R6, 17, pass);
    // Fragment offset and More Fragments (0x3fff on the wire).
    a.ldxh(R6, R2, 20);
    a.and_imm(R6, wire16(0x3fff));
    a.jne_imm(R6, 0, pass);
    a.ldxh(R6, R2, 36);
    for &p in ports.iter().take(MAX_PORTS) {
        a.jeq_imm(R6, wire16(p), port_ok);
    }
    a.ja(pass);
    a.bind(port_ok);
    if let Some(m) = magic {
        a.ldxw(R6, R2, 42);
        a.jne_imm(R6, i32::from_le_bytes(m), pass);
    }
    a.ld_map_fd(R1, xsks);
    a.mov_reg(R2, R9);
    a.mov_imm(R3, XDP_PASS);
    a.call(HELPER_REDIRECT_MAP);
    a.exit();
    a.bind(pass);
    a.mov_imm(R0, XDP_PASS);
    a.exit();
    a.finish()
}

/// The most ports one program matches.
pub const MAX_PORTS: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_land_on_their_labels_and_ports_are_in_wire_order() {
        let p = build(3, &[7411, 7413], Some(*b"RTPS"));
        // Every jump's target lies inside the program.
        for (i, insn) in p.iter().enumerate() {
            let class = insn.code & 0x07;
            if class == 0x05 && insn.code != 0x85 && insn.code != 0x95 {
                let t = i as isize + 1 + insn.off as isize;
                assert!(t >= 0 && (t as usize) < p.len(), "jump {i} to {t}");
            }
        }
        // The port comparisons hold the ports' wire bytes read little-endian.
        let ports: Vec<i32> = p
            .iter()
            .filter(|i| i.code == 0x15 && i.imm != 0)
            .map(|i| i.imm)
            .collect();
        assert_eq!(ports, vec![wire16(7411), wire16(7413)]);
        assert_eq!(wire16(7411), 0xf31c, "7411 = 0x1cf3");
        // The map's fd is in a two-slot load.
        let ld = p.iter().position(|i| i.code == 0x18).expect("map load");
        assert_eq!((p[ld].imm, p[ld].regs >> 4), (3, PSEUDO_MAP_FD));
        assert_eq!(p[ld + 1].code, 0);
        assert_eq!(p.last().map(|i| i.code), Some(0x95));
    }
}
