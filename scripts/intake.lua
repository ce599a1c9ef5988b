-- wrk script for the intake benchmark: every request is POST /v1/scan with a
-- URL no other request of the run uses, so each one creates a new job
-- instead of being deduplicated. The first script argument makes URLs
-- distinct across runs too. done() prints one machine-readable line.

local threads = {}
local counter = 0
local prefix = "r"
local headers = { ["Content-Type"] = "application/json" }

function setup(thread)
   thread:set("tid", #threads)
   table.insert(threads, thread)
end

function init(args)
   if args[1] then prefix = args[1] end
   prefix = prefix .. "t" .. tostring(tid or 0)
end

function request()
   counter = counter + 1
   local body = '{"url":"https://' .. prefix .. "n" .. counter .. '.bench.example/"}'
   return wrk.format("POST", "/v1/scan", headers, body)
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      "RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d non2xx=%d connect=%d read=%d write=%d timeout=%d\n",
      summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
      e.status, e.connect, e.read, e.write, e.timeout))
end
