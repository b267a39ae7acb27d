-- wrk_report.lua - wrk script of bench/http_bench.sh.
--
-- done() prints one machine-readable line (req/s, p50/p99 in microseconds,
-- error counts) so the bench script need not parse wrk's human output.
-- With BENCH_GEO=1 in the environment every request carries an X-Country
-- header taken in turn from a list: a cloned tag scanned around the world,
-- which the server believes because the bench client is on 127.0.0.1 (a
-- trusted proxy by default) and which the detector's geographic check sees.
-- Without it the requests are wrk's static ones (no Lua per request).

if os.getenv("BENCH_GEO") == "1" then
   local countries = { "US", "France", "CN", "Brazil", "NG", "RU", "JP", "Germany",
                       "India", "GB", "Mexico", "AE" }
   local n = 0
   function request()
      n = n + 1
      wrk.headers["X-Country"] = countries[(n % #countries) + 1]
      return wrk.format(nil, nil, wrk.headers)
   end
end

function done(summary, latency, requests)
   local e = summary.errors
   io.write(string.format(
      "WRK requests=%d duration_us=%d rps=%.1f p50_us=%d p99_us=%d max_us=%d " ..
      "connect=%d read=%d write=%d status=%d timeout=%d\n",
      summary.requests, summary.duration, summary.requests / (summary.duration / 1e6),
      latency:percentile(50), latency:percentile(99), latency.max,
      e.connect, e.read, e.write, e.status, e.timeout))
end
