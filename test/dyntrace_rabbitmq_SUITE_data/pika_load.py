#!/usr/bin/python3
"""A publisher and a consumer on one queue of a RabbitMQ broker, each with a
connection of its own: publishes (with publisher confirms) for SECONDS, then
an end marker; the consumer acks every message until it sees the marker.
Prints one JSON line: {"published": N, "consumed": M}.

    pika_load.py PORT SECONDS [RATE]

With RATE, publishes at most RATE messages a second (evenly paced), so
that runs do the same work whatever else the machine runs.
"""
import json
import sys
import threading
import time

import pika

QUEUE = "dyntrace_load"
END = b"end"


def params(port):
    return pika.ConnectionParameters(host="127.0.0.1", port=port)


def consume(port, ready, result):
    connection = pika.BlockingConnection(params(port))
    channel = connection.channel()
    channel.queue_declare(queue=QUEUE)
    channel.basic_qos(prefetch_count=100)
    ready.set()
    consumed = 0
    for method, _props, body in channel.consume(QUEUE, inactivity_timeout=60):
        if method is None:
            break
        channel.basic_ack(method.delivery_tag)
        if body == END:
            break
        consumed += 1
    channel.cancel()
    connection.close()
    result["consumed"] = consumed


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    rate = float(sys.argv[3]) if len(sys.argv) > 3 else None
    ready, result = threading.Event(), {"consumed": 0}
    consumer = threading.Thread(target=consume, args=(port, ready, result))
    consumer.start()
    ready.wait(60)
    connection = pika.BlockingConnection(params(port))
    channel = connection.channel()
    channel.queue_declare(queue=QUEUE)
    channel.confirm_delivery()
    published = 0
    start = time.monotonic()
    deadline = start + seconds
    while time.monotonic() < deadline:
        channel.basic_publish("", QUEUE, b"message %d" % published)
        published += 1
        if rate:
            ahead = start + published / rate - time.monotonic()
            if ahead > 0:
                time.sleep(ahead)
    channel.basic_publish("", QUEUE, END)
    connection.close()
    consumer.join(120)
    print(json.dumps({"published": published, "consumed": result["consumed"]}))


if __name__ == "__main__":
    main()
