wrk.method = "POST"
wrk.body = '{"url":"http://127.0.0.1:1/article","formats":["text"]}'
wrk.headers["Content-Type"] = "application/json"
