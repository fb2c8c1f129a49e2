//! Samples shared as values between the typed API's writers and readers of one process
//! (`tachyon_cdr::share`, `crate::local`): what the participant is told of their Rust types.

use std::any::TypeId;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use tachyon_wire::EntityId;

use super::{Error, Participant};

impl Participant {
    /// Local writer `writer` writes Rust type `ty` and can hold its samples as values
    /// ([`crate::history::PayloadPool::share`]). Returns the flag saying whether it may now:
    /// set while every matched reader is in this process and reads `ty` (see
    /// [`set_reader_shared_type`](Self::set_reader_shared_type)), so no one needs the bytes.
    /// A sample held as its value is still serialized if someone asks for its bytes (a
    /// reader of another process that matched since, a repair to a transcoding reader).
    pub fn share_writer_samples(
        &mut self,
        writer: EntityId,
        ty: TypeId,
    ) -> Result<Arc<AtomicBool>, Error> {
        Ok(self
            .writer_mut(writer)
            .ok_or(Error::UnknownWriter(writer))?
            .share_samples(ty))
    }

    /// Local reader `reader` reads Rust type `ty`: writers of this process writing `ty` may
    /// hand it their samples as values (it then takes them without decoding). Set before the
    /// reader is announced, so writers know it when they match it.
    pub fn set_reader_shared_type(&mut self, reader: EntityId, ty: TypeId) -> Result<(), Error> {
        self.reader_mut(reader)
            .ok_or(Error::UnknownReader(reader))?
            .set_shared_type(ty);
        Ok(())
    }
}
