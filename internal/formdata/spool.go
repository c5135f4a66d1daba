package formdata

import (
	"bytes"
	"io"
	"os"
)

// spool holds the contents of file parts read before the wanted field: in
// memory up to limit bytes, then (all of it) in a temporary file in dir.
type spool struct {
	limit int64
	dir   string
	mem   []byte
	file  *os.File
	size  int64
	gone  bool // closed: nothing can be read back
}

func (s *spool) Write(p []byte) (int, error) {
	if s.file == nil && s.size+int64(len(p)) <= s.limit {
		if need := len(s.mem) + len(p); need > cap(s.mem) {
			// Double up to the limit: append grows big slices by a
			// quarter, which allocates five times the final size.
			m := make([]byte, len(s.mem), min(max(2*cap(s.mem), need, 4096), int(s.limit)))
			copy(m, s.mem)
			s.mem = m
		}
		s.mem = append(s.mem, p...)
		s.size += int64(len(p))
		return len(p), nil
	}
	if s.file == nil {
		f, err := os.CreateTemp(s.dir, "formdata-*")
		if err != nil {
			return 0, err
		}
		s.file = f
		if _, err := f.Write(s.mem); err != nil {
			return 0, err
		}
		s.mem = nil // the file holds it now
	}
	n, err := s.file.Write(p)
	s.size += int64(n)
	return n, err
}

// section reads back n bytes written at off.
func (s *spool) section(off, n int64) io.Reader {
	if s.gone {
		return errReader{os.ErrClosed}
	}
	if s.file != nil {
		return io.NewSectionReader(s.file, off, n)
	}
	return bytes.NewReader(s.mem[off : off+n])
}

// close removes the file, if any; it may be called more than once.
func (s *spool) close() error {
	s.mem, s.gone = nil, true
	if s.file == nil {
		return nil
	}
	f := s.file
	s.file = nil
	err := f.Close()
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	return err
}
