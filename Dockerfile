FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 FIXBASE_DATA_DIR=/data
WORKDIR /app
COPY requirements.txt .
# Point TORCH_INDEX at PyTorch's CPU wheel index to keep the image small; from PyPI alone,
# torch==2.13.0 is the multi-GB CUDA build.
ARG TORCH_INDEX=""
RUN if [ -n "$TORCH_INDEX" ]; then pip install --index-url "$TORCH_INDEX" torch==2.13.0; fi \
 && pip install -r requirements.txt
COPY . .
# The embedding model, exported to ONNX once here rather than by the first process that needs it.
ENV FIXBASE_MODEL_CACHE=/opt/fixbase/models
RUN FIXBASE_DATA_DIR=/tmp/build-data python manage.py prepare_model
# Static files (the CSS, htmx, the API docs page) are served by WhiteNoise from the installed apps
# (WHITENOISE_USE_FINDERS), so no collectstatic step is needed.
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "2", "--timeout", "120"]
