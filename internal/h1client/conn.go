package h1client

import (
	"bufio"
	"net"
	"net/textproto"
	"time"
)

// aLongTimeAgo is a deadline in the past: setting it unblocks pending I/O.
var aLongTimeAgo = time.Unix(1, 0)

// conn is one connection to an upstream. It carries at most one exchange at
// a time and is pooled only once that exchange's response is fully read.
type conn struct {
	nc     net.Conn
	src    src // below br, so the response head can be bounded
	br     *bufio.Reader
	tp     textproto.Reader
	p      *hostPool
	idleAt time.Time
	reused bool
	abort  func() // built once per conn, handed to context.AfterFunc per exchange
	live   liveness
	// br has no buffer while parked: until the response's first bytes,
	// while the conn is idle in the pool, and while a body waits for its
	// next bytes. shell is an empty bufio.Reader kept to park br's buffer
	// in without allocating; size is br's buffer size.
	parked bool
	shell  *bufio.Reader
	size   int

	// writev scratch, kept here so that handing it to the kernel does not
	// allocate per request: the head and up to three body parts.
	wbufs [4][]byte
	bufs  net.Buffers
}

func newConn(nc net.Conn, p *hostPool, bufSize int) *conn {
	c := &conn{nc: nc, p: p, size: bufSize, parked: true}
	c.src = src{r: nc, left: -1}
	c.br = new(bufio.Reader) // its buffer comes when the response does
	c.tp.R = c.br
	c.abort = func() { nc.SetDeadline(aLongTimeAgo) }
	c.live.init(nc, c.park)
	return c
}

// waitReadable waits until the connection has bytes to read, or has
// failed or been closed, and does not hold the read buffer while it
// waits: a stream held open spends most of its life waiting for its next
// event (or for its first, while a model thinks), and thousands of them
// would each keep a buffer that holds nothing. Its failures are left to
// the read that follows, through br, which has a buffer again.
func (c *conn) waitReadable() {
	if !c.parked && c.br.Buffered() > 0 {
		return
	}
	c.live.wait() // parks br if it must block
	if c.parked {
		c.unpark()
	}
}

// park gives br's buffer to the transport's pool; br must hold no bytes.
// br stays unusable until unpark.
func (c *conn) park() {
	if c.parked {
		return
	}
	c.parked = true
	s := c.shell
	if s == nil {
		s = new(bufio.Reader)
	}
	c.shell = nil
	*s = *c.br
	*c.br = bufio.Reader{}
	c.p.t.readers.Put(s)
}

// unpark gives br a buffer from the pool, or a new one.
func (c *conn) unpark() {
	s, _ := c.p.t.readers.Get().(*bufio.Reader)
	if s == nil {
		s = bufio.NewReaderSize(nil, c.size)
	}
	*c.br = *s
	c.br.Reset(&c.src)
	*s = bufio.Reader{}
	c.shell = s
	c.parked = false
}

func (c *conn) close() { c.nc.Close() }

// writev writes head then the body's parts with one system call where the
// conn allows it.
func (c *conn) writev(head []byte, parts [][]byte) (int64, error) {
	if 1+len(parts) <= len(c.wbufs) {
		c.wbufs[0] = head
		n := 1 + copy(c.wbufs[1:], parts)
		c.bufs = c.wbufs[:n]
	} else {
		c.bufs = append(net.Buffers{head}, parts...)
	}
	n, err := c.bufs.WriteTo(c.nc)
	c.wbufs = [4][]byte{} // do not keep the caller's body alive
	c.bufs = nil
	return n, err
}
