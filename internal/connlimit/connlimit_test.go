package connlimit

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpdiff/mcpdiff/internal/testenv"
)

// counting counts the sockets its connections hold open, and the most at once.
type counting struct {
	net.Listener
	open, most atomic.Int64
}

func (l *counting) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if n := l.open.Add(1); n > l.most.Load() {
		l.most.Store(n) // only Accept raises it, on one goroutine
	}
	return &countedConn{Conn: c, l: l}, nil
}

type countedConn struct {
	net.Conn
	l    *counting
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

// serve starts an HTTP server limited to n connections whose handler calls h, and
// returns its address and its socket count.
func serve(t *testing.T, n int, h http.HandlerFunc) (string, *counting) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &counting{Listener: ln}
	states := make(chan http.ConnState, 1024)
	srv := &http.Server{Handler: h, ConnState: func(_ net.Conn, s http.ConnState) {
		select {
		case states <- s:
		default:
		}
	}}
	limited := Limit(srv, cl, n)
	go srv.Serve(limited)
	t.Cleanup(func() { srv.Close() })
	// The ConnState hook set before Limit is still called.
	t.Cleanup(func() {
		if len(states) == 0 && cl.most.Load() > 0 {
			t.Error("the server's own ConnState hook was never called")
		}
	})
	return ln.Addr().String(), cl
}

func halfOpen(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedByServer waits until the server has closed c.
func closedByServer(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(testenv.Scaled(10 * time.Second)))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: still open after 10 s", what)
	}
}

// request sends one GET on c and reads its answer.
func request(c net.Conn) (string, error) {
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(testenv.Scaled(10 * time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func ok(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }

// Many half-open connections take no place from a client: it is answered at once,
// and the server never holds more than its limit.
func TestHalfOpenConnectionsMakeRoom(t *testing.T) {
	addr, cl := serve(t, 4, ok)
	var slow []net.Conn
	for range 20 {
		slow = append(slow, halfOpen(t, addr))
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := request(c); err != nil || got != "ok" {
		t.Fatalf("a client after 20 half-open connections: %q %v", got, err)
	}
	if most := cl.most.Load(); most > 4 {
		t.Errorf("%d sockets open at once, want at most 4", most)
	}
	// The oldest went first: the first 17 were closed to make room.
	for i, s := range slow[:17] {
		closedByServer(t, s, "half-open connection "+string(rune('a'+i)))
	}
}

// The place given up is the oldest that waits: a half-open connection before an idle
// one that went idle later, and neither one that is being answered.
func TestOldestWaitingGoesFirst(t *testing.T) {
	addr, _ := serve(t, 4, ok) // three held, a fourth being accepted
	a := halfOpen(t, addr)
	b, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, err := request(b); err != nil || got != "ok" {
		t.Fatalf("b: %q %v", got, err)
	}
	c := halfOpen(t, addr)
	d := halfOpen(t, addr) // makes room: a goes
	closedByServer(t, a, "a, the oldest half-open connection")
	e := halfOpen(t, addr) // b went idle before c and d were accepted: b goes
	closedByServer(t, b, "b, idle since before c")
	// c, d and e are still there: each finishes its request.
	for name, conn := range map[string]net.Conn{"c": c, "d": d, "e": e} {
		if _, err := conn.Write([]byte("\r\n")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		conn.SetReadDeadline(time.Now().Add(testenv.Scaled(10 * time.Second)))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s was closed, but a and b were older: %v", name, err)
		}
		resp.Body.Close()
	}
}

// A connection whose request is being answered is never closed to make room: when
// every place is serving, a new connection is closed instead, and the requests
// already being answered finish.
func TestServingConnectionsStay(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 3)
	addr, cl := serve(t, 4, func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
		io.WriteString(w, "done")
	})
	type answer struct {
		body string
		err  error
	}
	answers := make(chan answer, 3)
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go func() {
			b, err := request(c)
			answers <- answer{b, err}
		}()
		testenv.Receive(t, started, "the handler starts")
	}
	late := halfOpen(t, addr)
	closedByServer(t, late, "a connection while every place serves a request")
	close(release)
	for range 3 {
		a := testenv.Receive(t, answers, "a request being answered")
		if a.err != nil || a.body != "done" {
			t.Errorf("a request being answered when the limit was reached: %q %v", a.body, a.err)
		}
	}
	if most := cl.most.Load(); most > 4 {
		t.Errorf("%d sockets open at once, want at most 4", most)
	}
	// Once they are answered, their connections wait and give up their places.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := request(c); err != nil || got != "done" {
		t.Fatalf("a client after the served ones: %q %v", got, err)
	}
}
