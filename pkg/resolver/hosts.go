package resolver

import (
	"bufio"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"
)

// hostsRecheck bounds how often the hosts file is stat'ed for changes.
const hostsRecheck = 5 * time.Second

// maxHostsBytes bounds how much of a hosts file is read.
const maxHostsBytes = 4 << 20

// fromHosts returns the hosts-file addresses of name that match the wanted
// families, IPv4 first.
func (r *Resolver) fromHosts(name string, want4, want6 bool) []netip.Addr {
	if r.HostsFile == "" {
		return nil
	}
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	r.hostsMu.Lock()
	defer r.hostsMu.Unlock()
	if now := time.Now(); now.Sub(r.hostsChecked) >= hostsRecheck || r.hosts == nil {
		r.hostsChecked = now
		if st, err := os.Stat(r.HostsFile); err != nil {
			r.hosts = map[string][]netip.Addr{}
		} else if r.hosts == nil || !st.ModTime().Equal(r.hostsMod) {
			r.hostsMod = st.ModTime()
			r.hosts = readHosts(r.HostsFile)
		}
	}
	var v4, v6 []netip.Addr
	for _, a := range r.hosts[name] {
		if a.Is4() && want4 {
			v4 = append(v4, a)
		} else if a.Is6() && want6 {
			v6 = append(v6, a)
		}
	}
	return append(v4, v6...)
}

// readHosts parses the "address name [alias...]" lines of a hosts file.
func readHosts(path string) map[string][]netip.Addr {
	out := map[string][]netip.Addr{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxHostsBytes))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		a, err := netip.ParseAddr(fields[0])
		if err != nil {
			continue
		}
		a = a.Unmap()
		for _, n := range fields[1:] {
			n = strings.TrimSuffix(strings.ToLower(n), ".")
			out[n] = append(out[n], a)
		}
	}
	return out
}
