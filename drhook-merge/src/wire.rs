//! A merger as bytes, to send to another task: every distinct routine's
//! name and accumulators, the tasks' numbers and the longest elapsed time.
//! Its size grows with the number of distinct routines (and 4 bytes per
//! task for the task numbers), never with the number of profiles folded;
//! with call paths, the paths' merger follows, encoded the same way.
//! Little-endian, no padding; decoding checks every length.

use crate::{Acc, Kind, Merger, RoutineAcc};

const MAGIC: &[u8; 8] = b"DRHKRED2";

pub(crate) struct Out(pub(crate) Vec<u8>);

impl Out {
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    pub(crate) fn u128(&mut self, v: u128) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub(crate) fn acc(&mut self, a: &Acc) {
        self.u128(a.sum as u128);
        self.u128(a.sumsq);
        self.f64(a.min);
        self.f64(a.max);
        self.u32(a.max_task);
        self.u32(a.max_thread);
        self.u64(a.max_order);
    }
}

pub(crate) struct In<'a>(pub(crate) &'a [u8]);

impl<'a> In<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub(crate) fn f64(&mut self) -> Option<f64> {
        Some(f64::from_bits(self.u64()?))
    }
    pub(crate) fn u128(&mut self) -> Option<u128> {
        Some(u128::from_le_bytes(self.take(16)?.try_into().ok()?))
    }
    pub(crate) fn acc(&mut self) -> Option<Acc> {
        Some(Acc {
            sum: self.u128()? as i128,
            sumsq: self.u128()?,
            min: self.f64()?,
            max: self.f64()?,
            max_task: self.u32()?,
            max_thread: self.u32()?,
            max_order: self.u64()?,
        })
    }
}

impl Merger {
    /// The merger as bytes ([`Merger::decode`] reads them back). A task
    /// begun and not ended is not included.
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Out(Vec::with_capacity(64 + self.names.len() * 180));
        o.0.extend_from_slice(MAGIC);
        o.0.push(match self.kind {
            None => 0,
            Some(Kind::Wall) => 1,
            Some(Kind::Cpu) => 2,
        });
        o.f64(self.elapsed.0);
        o.0.push(u8::from(self.elapsed.1));
        o.u64(self.order);
        o.u32(self.procs.len() as u32);
        for &p in &self.procs {
            o.u32(p);
        }
        o.u32(self.names.len() as u32);
        for (name, a) in self.names.iter().zip(&self.accs) {
            o.u32(name.len() as u32);
            o.0.extend_from_slice(name.as_bytes());
            o.u32(a.present);
            o.acc(&a.calls);
            o.acc(&a.self_s);
            o.acc(&a.total_s);
        }
        match &self.paths {
            None => o.0.push(0),
            Some(p) => {
                o.0.push(1);
                let b = p.encode();
                o.u64(b.len() as u64);
                o.0.extend_from_slice(&b);
            }
        }
        o.0
    }

    /// Reads [`Merger::encode`]'s bytes; `None` when they are not such.
    pub fn decode(b: &[u8]) -> Option<Merger> {
        let mut i = In(b);
        if i.take(MAGIC.len())? != MAGIC {
            return None;
        }
        let mut m = Merger::new();
        m.kind = match i.take(1)?[0] {
            0 => None,
            1 => Some(Kind::Wall),
            2 => Some(Kind::Cpu),
            _ => return None,
        };
        let e = i.f64()?;
        let missing = i.take(1)?[0] != 0;
        m.elapsed = (e, missing);
        m.order = i.u64()?;
        let nprocs = i.u32()? as usize;
        if nprocs > i.0.len() / 4 {
            return None;
        }
        m.procs = (0..nprocs).map(|_| i.u32()).collect::<Option<_>>()?;
        let nnames = i.u32()?;
        for _ in 0..nnames {
            let len = i.u32()? as usize;
            let name = std::str::from_utf8(i.take(len)?).ok()?;
            let present = i.u32()?;
            let r = RoutineAcc {
                present,
                calls: i.acc()?,
                self_s: i.acc()?,
                total_s: i.acc()?,
            };
            let id = m.id(name);
            m.accs[id as usize] = r;
        }
        if i.take(1)?[0] != 0 {
            let len = usize::try_from(i.u64()?).ok()?;
            m.paths = Some(Box::new(Merger::decode(i.take(len)?)?));
        }
        i.0.is_empty().then_some(m)
    }
}
