package fingerprint

import (
	"time"
	"testing"
)

var flushBuf = make([]byte, 16<<20)

func flushCache() {
	for i := 0; i < len(flushBuf); i += 64 {
		flushBuf[i]++
	}
}

// e2e-like page: 40 KB
func BenchmarkTmpColdHTML(b *testing.B) {
	_, e := builtinEngine(b)
	pages := corpus()
	d := e.kinds[kindHTML].dfa
	var parts [3][]acHit
	var hits []acHit
	for _, mode := range []string{"one", "four"} {
		b.Run(mode, func(b *testing.B) {
			var bytes int64
			var spent int64
			for i := 0; i < b.N; i++ {
				t := pages[i%len(pages)].ev.HTML[:40<<10]
				flushCache()
				b.StartTimer()
				st := nowNano()
				if mode == "one" {
					hits = d.finish(t, 0, 0, 0, len(t), hits[:0])
				} else {
					hits = d.scan(t, hits[:0], &parts)
				}
				spent += nowNano() - st
				bytes += int64(len(t))
			}
			b.ReportMetric(float64(spent)/float64(bytes), "ns/byte")
		})
	}
}

func nowNano() int64 { return timeNow().UnixNano() }
var timeNow = time.Now
