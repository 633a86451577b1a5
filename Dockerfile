# Production image for web, worker and beat (docker-compose.yml). Python 3.11 to match the torch pin.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    MEMORYLANE_HOME=/data

# torch==2.13.0 from the default index is a multi-GB CUDA build; pass a CPU wheel index here
# (docker compose build --build-arg TORCH_INDEX_URL=...) to keep the image small.
ARG TORCH_INDEX_URL=""

WORKDIR /app
COPY pyproject.toml README.md manage.py ./
COPY memorylane ./memorylane
COPY memory ./memory
COPY api ./api
COPY dashboard ./dashboard
COPY clients ./clients
COPY bench ./bench
COPY templates ./templates
COPY static ./static

RUN if [ -n "$TORCH_INDEX_URL" ]; then pip install --no-cache-dir --extra-index-url "$TORCH_INDEX_URL" torch==2.13.0; fi \
    && pip install --no-cache-dir . \
    && useradd --create-home --uid 1000 memorylane \
    && mkdir -p /data && chown memorylane /data

USER memorylane
EXPOSE 8000
CMD ["uvicorn", "memorylane.asgi:application", "--host", "0.0.0.0", "--port", "8000", "--lifespan", "off"]
