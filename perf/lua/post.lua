-- A POST of one JSON body under wrk: the body from POST_BODY, other headers from wrk's -H (perf/cycle.py).
wrk.method = "POST"
wrk.body = os.getenv("POST_BODY")
wrk.headers["Content-Type"] = "application/json"
