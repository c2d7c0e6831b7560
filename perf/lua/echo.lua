-- The floor's POST /echo under wrk, with the body of a submission (perf/cycle.py).
wrk.method = "POST"
wrk.body = '{"resultType":"text","content":"result of the cycle"}'
wrk.headers["Content-Type"] = "application/json"
