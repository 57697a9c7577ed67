//! Reading protobuf field by field: varints and length-delimited values are borrowed from the
//! input, and any field not asked for is stepped over by its wire type without allocating.

/// Why bytes are not the protobuf they claim to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ProtoError {
    #[error("protobuf ends inside a field")]
    Truncated,
    #[error("protobuf varint longer than ten bytes")]
    LongVarint,
    /// A wire type Kubernetes never writes (groups) or that does not exist.
    #[error("protobuf wire type {0} is not supported")]
    WireType(u8),
    #[error("protobuf field number zero")]
    FieldZero,
    /// A known field carries a different wire type than its schema says.
    #[error("protobuf field {field} has the wrong wire type")]
    Mismatch { field: u32 },
    /// A number outside what its field allows (a negative restart count).
    #[error("protobuf field {field} is out of range")]
    Range { field: u32 },
    #[error("not a Kubernetes protobuf body (no k8s magic)")]
    NoMagic,
    /// The envelope holds another kind of object than the one asked for.
    #[error("protobuf envelope holds another kind of object")]
    Kind,
    /// A watch frame's length prefix says more than arrived, or more than a frame may be.
    #[error("watch frame length is wrong")]
    Frame,
}

/// One field's value, borrowed from the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl<'a> Value<'a> {
    /// The bytes of a string, a message or a `bytes` field.
    pub fn bytes(self, field: u32) -> Result<&'a [u8], ProtoError> {
        match self {
            Value::Bytes(b) => Ok(b),
            _ => Err(ProtoError::Mismatch { field }),
        }
    }

    pub fn varint(self, field: u32) -> Result<u64, ProtoError> {
        match self {
            Value::Varint(v) => Ok(v),
            _ => Err(ProtoError::Mismatch { field }),
        }
    }
}

/// The fields of one message, in the order they were written.
#[derive(Debug, Clone)]
pub struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], ProtoError> {
        if n > self.rest.len() {
            return Err(ProtoError::Truncated);
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }

    fn varint(&mut self) -> Result<u64, ProtoError> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let (&byte, tail) = self.rest.split_first().ok_or(ProtoError::Truncated)?;
            self.rest = tail;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ProtoError::LongVarint)
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], ProtoError> {
        self.take(N)?.try_into().map_err(|_| ProtoError::Truncated)
    }

    /// The next field's number and value; None at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<(u32, Value<'a>)>, ProtoError> {
        if self.rest.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let field = u32::try_from(key >> 3).map_err(|_| ProtoError::FieldZero)?;
        if field == 0 {
            return Err(ProtoError::FieldZero);
        }
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => Value::Fixed64(u64::from_le_bytes(self.fixed::<8>()?)),
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| ProtoError::Truncated)?;
                Value::Bytes(self.take(len)?)
            }
            5 => Value::Fixed32(u32::from_le_bytes(self.fixed::<4>()?)),
            other => return Err(ProtoError::WireType(other as u8)),
        };
        Ok(Some((field, value)))
    }
}

/// Calls `each` with every field of `message`, stopping at the first error.
pub fn for_each_field<'a>(
    message: &'a [u8],
    mut each: impl FnMut(u32, Value<'a>) -> Result<(), ProtoError>,
) -> Result<(), ProtoError> {
    let mut fields = Fields { rest: message };
    while let Some((field, value)) = fields.next_field()? {
        each(field, value)?;
    }
    Ok(())
}

/// Field `number` of `message`, each occurrence read by `read`; the last one counts, as protobuf
/// reads a repeated scalar.
pub fn last_field<'a, T>(
    message: &'a [u8],
    number: u32,
    read: impl Fn(Value<'a>) -> Result<T, ProtoError>,
) -> Result<Option<T>, ProtoError> {
    let mut found = None;
    for_each_field(message, |f, v| {
        if f == number {
            found = Some(read(v)?);
        }
        Ok(())
    })?;
    Ok(found)
}

/// A map entry (maps are written as repeated messages): its key (1) and value (2), as bytes;
/// empty when absent, as protobuf reads a missing field.
pub fn map_entry(entry: &[u8]) -> Result<(&[u8], &[u8]), ProtoError> {
    let (mut key, mut value) = (&[][..], &[][..]);
    for_each_field(entry, |f, v| {
        match f {
            1 => key = v.bytes(f)?,
            2 => value = v.bytes(f)?,
            _ => {}
        }
        Ok(())
    })?;
    Ok((key, value))
}
