//! The Postgres v3 wire format: reading a frontend message (the startup packet has no type
//! byte), and building backend messages. Every length is checked against the most its
//! phase allows before anything is read, and a body's buffer grows as its bytes arrive,
//! never from the length a peer claims.

use std::io::{self, Read, Write};

/// The largest frontend message accepted after authentication (a query, a bind's
/// parameters).
pub const MESSAGE_BYTES_MAX: usize = 64 << 20;

/// The largest startup packet (PostgreSQL's own limit, `MAX_STARTUP_PACKET_LENGTH`).
pub const STARTUP_BYTES_MAX: usize = 10_000;

/// The largest message before authentication (the password).
pub const LOGIN_BYTES_MAX: usize = 4 << 10;

/// A body's buffer starts at most this large, and doubles as its bytes arrive.
const FIRST_BUFFER_BYTES: usize = 8 << 10;

/// The startup packet's request codes (a cancel request, 80877102, gets no answer).
pub const PROTOCOL_3: i32 = 196_608;
pub const SSL_REQUEST: i32 = 80_877_103;
pub const GSS_REQUEST: i32 = 80_877_104;

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

/// Reads a length word and that many bytes (less the word itself), refusing a length over
/// `max`.
fn read_body(stream: &mut impl Read, max: usize) -> io::Result<Vec<u8>> {
    let mut length = [0u8; 4];
    stream.read_exact(&mut length)?;
    let length = usize::try_from(i32::from_be_bytes(length))
        .map_err(|_| invalid("a negative message length"))?;
    if !(4..=max).contains(&length) {
        return Err(invalid("a message length out of bounds"));
    }
    let wanted = length - 4;
    let mut body = Vec::with_capacity(wanted.min(FIRST_BUFFER_BYTES));
    let read = stream
        .take(u64::try_from(wanted).unwrap_or(u64::MAX))
        .read_to_end(&mut body)?;
    if read < wanted {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the connection closed inside a message",
        ));
    }
    Ok(body)
}

/// The startup packet: its request code and the rest.
pub fn read_startup(stream: &mut impl Read) -> io::Result<(i32, Vec<u8>)> {
    let body = read_body(stream, STARTUP_BYTES_MAX)?;
    if body.len() < 4 {
        return Err(invalid("a startup packet without a code"));
    }
    let code = i32::from_be_bytes([body[0], body[1], body[2], body[3]]);
    Ok((code, body[4..].to_vec()))
}

/// A typed message of at most `max` bytes: its type byte and body; `begun` is called when
/// its first byte has arrived.
pub fn read_message(
    stream: &mut impl Read,
    max: usize,
    begun: impl FnOnce(),
) -> io::Result<(u8, Vec<u8>)> {
    let mut kind = [0u8; 1];
    stream.read_exact(&mut kind)?;
    begun();
    Ok((kind[0], read_body(stream, max)?))
}

/// A cursor over a message body.
pub struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes }
    }

    /// A NUL-terminated string.
    pub fn string(&mut self) -> io::Result<String> {
        let end = self
            .bytes
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| invalid("a string without its NUL"))?;
        let text = String::from_utf8(self.bytes[..end].to_vec())
            .map_err(|_| invalid("a string that is not UTF-8"))?;
        self.bytes = &self.bytes[end + 1..];
        Ok(text)
    }

    pub fn i16(&mut self) -> io::Result<i16> {
        let bytes = self.take(2)?;
        Ok(i16::from_be_bytes([bytes[0], bytes[1]]))
    }

    pub fn i32(&mut self) -> io::Result<i32> {
        let bytes = self.take(4)?;
        Ok(i32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    /// A count (an `i16`) that must not be negative.
    pub fn count(&mut self) -> io::Result<usize> {
        usize::try_from(self.i16()?).map_err(|_| invalid("a negative count"))
    }

    pub fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        if self.bytes.len() < n {
            return Err(invalid("a message shorter than its fields"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    /// A length-prefixed value (`-1`: null).
    pub fn value(&mut self) -> io::Result<Option<&'a [u8]>> {
        let length = self.i32()?;
        if length < 0 {
            return Ok(None);
        }
        let length = usize::try_from(length).map_err(|_| invalid("a bad value length"))?;
        self.take(length).map(Some)
    }
}

/// A backend message being built.
pub struct Message {
    kind: u8,
    body: Vec<u8>,
}

impl Message {
    pub fn new(kind: u8) -> Message {
        Message {
            kind,
            body: Vec::new(),
        }
    }

    pub fn string(mut self, text: &str) -> Message {
        self.body.extend_from_slice(text.as_bytes());
        self.body.push(0);
        self
    }

    pub fn i16(mut self, n: i16) -> Message {
        self.body.extend_from_slice(&n.to_be_bytes());
        self
    }

    pub fn i32(mut self, n: i32) -> Message {
        self.body.extend_from_slice(&n.to_be_bytes());
        self
    }

    pub fn byte(mut self, b: u8) -> Message {
        self.body.push(b);
        self
    }

    /// Bytes as they are (CopyData's).
    pub fn bytes(mut self, bytes: &[u8]) -> Message {
        self.body.extend_from_slice(bytes);
        self
    }

    /// A length-prefixed value (`None`: null).
    pub fn value(mut self, value: Option<&[u8]>) -> Message {
        match value {
            None => self.body.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(bytes) => {
                let length = i32::try_from(bytes.len()).unwrap_or(i32::MAX);
                self.body.extend_from_slice(&length.to_be_bytes());
                self.body.extend_from_slice(bytes);
            }
        }
        self
    }

    /// Appends the message to `out`.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let length = i32::try_from(self.body.len() + 4).unwrap_or(i32::MAX);
        out.write_all(&[self.kind])?;
        out.write_all(&length.to_be_bytes())?;
        out.write_all(&self.body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_reads_back_and_bad_lengths_are_refused() {
        let mut bytes = Vec::new();
        Message::new(b'Q')
            .string("SELECT 1")
            .write_to(&mut bytes)
            .unwrap();
        let (kind, body) = read_message(&mut bytes.as_slice(), MESSAGE_BYTES_MAX, || {}).unwrap();
        assert_eq!(kind, b'Q');
        assert_eq!(Reader::new(&body).string().unwrap(), "SELECT 1");
        for length in [-5i32, 2, i32::MAX] {
            let mut bad = vec![b'Q'];
            bad.extend_from_slice(&length.to_be_bytes());
            assert!(read_message(&mut bad.as_slice(), MESSAGE_BYTES_MAX, || {}).is_err());
        }
        // Before authentication, a few KB at most; a claimed length costs nothing until
        // its bytes arrive.
        assert!(read_message(&mut bytes.as_slice(), 8, || {}).is_err());
        let mut claimed = vec![b'Q'];
        claimed.extend_from_slice(&(60i32 << 20).to_be_bytes());
        claimed.extend_from_slice(b"short");
        let cut = read_message(&mut claimed.as_slice(), MESSAGE_BYTES_MAX, || {});
        assert_eq!(cut.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
        let mut startup = (i32::try_from(STARTUP_BYTES_MAX).unwrap() + 1)
            .to_be_bytes()
            .to_vec();
        startup.extend_from_slice(&PROTOCOL_3.to_be_bytes());
        assert!(read_startup(&mut startup.as_slice()).is_err());
        assert!(Reader::new(b"no nul").string().is_err());
        assert!(Reader::new(&[0, 0, 0, 9, 1]).value().is_err());
    }
}
